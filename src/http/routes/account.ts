// The user's account page: the applications they have granted access to, each with a button to
// withdraw it, the apps they registered, their recent sign-ins, a form to change their password, and
// one for the claims they own (./account-profile.ts).
// Each form calls one domain function (src/account, src/authn/password/step.ts). Its sign-in page,
// /account/login, is the sign-in's (./login.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountOverview, deleteOwnedClient, withdrawClient } from '../../account/index.ts';
import { secondFactorOverview } from '../../account/second-factors.ts';
import { upstreamOverview } from '../../account/upstream.ts';
import { passkeyEnrolment } from '../../authn/passkeys/enrolment.ts';
import type { BrowserSession } from '../../authn/session.ts';
import { changePassword } from '../../authn/password/step.ts';
import type { User } from '../../store/users.ts';
import { accountPage } from '../../ui/account.ts';
import type { Text } from '../../ui/layout.ts';
import type { PasswordRule } from '../../authn/password/rules.ts';
import { mailAvailable } from '../../mail/compose.ts';
import { SECOND_FACTOR_NOTES } from '../../ui/second-factors.ts';
import type { RouteContext } from '../context.ts';
import { sendPage } from '../pages.ts';
import { formValue, queryValue } from '../forms.ts';
import { throttledText } from '../outcome.ts';
import { passkeyNote } from '../passkeys.ts';
import { accountForm, signedInSession } from '../sign-in.ts';
import type { ProfileSection } from '../../ui/profile.ts';
import { accountProfileRoutes, profileValues } from './account-profile.ts';

type PasswordNote = { error?: Text; changed?: boolean };

/** What the upstream providers' list says after a link or unlink (./account-upstream.ts). */
const UPSTREAM_NOTES: Record<string, { notice?: Text; error?: Text }> = {
  linked: { notice: { key: 'linked.note.linked' } },
  unlinked: { notice: { key: 'linked.note.unlinked' } },
  last: { error: { key: 'linked.note.last' } },
};

/** What the email section says after a change was asked for (./mail-links.ts). */
const EMAIL_NOTES: Record<string, { note?: Text; error?: Text }> = {
  sent: { note: { key: 'mail.page.email.sent' } },
  invalid: { error: { key: 'mail.page.badEmail' } },
  refused: { error: { key: 'mail.page.throttled', values: { minutes: 60, seconds: 0 } } },
};

/** What the password form says of a new password that breaks a rule (src/authn/password/rules.ts). */
export function ruleText(problem: PasswordRule): Text {
  switch (problem.rule) {
    case 'too-short':
      return { key: 'password.tooShort', values: { min: problem.limit } };
    case 'too-long':
      return { key: 'password.tooLong', values: { max: problem.limit } };
    case 'username':
      return { key: 'password.isUsername' };
    case 'common':
      return { key: 'password.common' };
  }
}

export function accountRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const passwordDeps = { store: ctx.store, throttle: ctx.config.throttle, observer: ctx.security };

  /**
   * The page: the applications with access, the recent sign-ins, the password form and what it said,
   * the passkeys, the upstream providers linked.
   */
  async function sendAccount(
    request: FastifyRequest,
    reply: FastifyReply,
    current: { session: BrowserSession; user: User },
    password?: PasswordNote,
    profile?: ProfileSection,
  ) {
    const { user, session } = current;
    const now = ctx.now();
    const overview = await accountOverview(ctx.store, ctx.config.scopes, user, now);
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const enrolment = { store: ctx.store, relyingParty: ctx.relyingParty };
    const bind = () => ctx.browser.binding(request, reply);
    const passkeys = await passkeyEnrolment(enrolment, { user, session, bind, now });
    const note = passkeyNote(queryValue(request, 'passkey'));
    const upstream = {
      ...(await upstreamOverview(ctx.store, user)),
      ...UPSTREAM_NOTES[queryValue(request, 'upstream')!],
    };
    const hasPassword = user.passwordHash !== null;
    const emailNote = EMAIL_NOTES[queryValue(request, 'email')!];
    const email = mailAvailable(ctx.mail)
      ? { email: { email: user.email, verified: user.emailVerified, csrfToken, ...emailNote } }
      : {};
    const saved = queryValue(request, 'profile') === 'saved';
    const ownClaims = profile ?? { values: profileValues(user), ...(saved ? { saved } : {}) };
    const page = {
      username: user.username,
      csrfToken,
      ...overview,
      upstream,
      hasPassword,
      ...email,
      profile: ownClaims,
    };
    const withPasskeys = { ...page, passkeys: { ...passkeys, ...(note ? { note } : {}) } };
    // Authenticator app and recovery codes, unless TESSERA_MFA=off.
    const mfaNote = SECOND_FACTOR_NOTES[queryValue(request, 'mfa') ?? ''];
    const secondFactors =
      ctx.config.mfa.mode === 'off'
        ? {}
        : {
            secondFactors: {
              ...(await secondFactorOverview(ctx.secondFactors, { user, session, bind, now })),
              ...(mfaNote ? { note: mfaNote } : {}),
            },
          };
    const full = { ...withPasskeys, ...secondFactors, ...(password ? { password } : {}) };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => accountPage(ui, full));
  }

  app.get('/account', { config: { html: true } }, async (request, reply) => {
    const current = await signedInSession(ctx, request);
    if (!current) return reply.redirect('/account/login', 302);
    const note = queryValue(request, 'password') === 'changed' ? { changed: true } : undefined;
    return sendAccount(request, reply, current, note);
  });

  app.post('/account/password', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await accountForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const { user, requester, now } = current;
    const outcome = await changePassword(
      { ...passwordDeps, minLength: ctx.config.passwordMinLength },
      {
        user,
        sessionId: current.session.id,
        current: formValue(request, 'current') ?? '',
        next: formValue(request, 'new') ?? '',
        knownDevice: ctx.browser.knownDevice(request, user.username),
        requester,
        now,
      },
    );
    switch (outcome.kind) {
      case 'changed':
        return reply.redirect('/account?password=changed', 303);
      case 'refused': {
        const error = { ...throttledText(outcome.refusal), key: 'password.throttled' } as const;
        reply.code(429).header('retry-after', String(outcome.refusal.retryAfter));
        return sendAccount(request, reply, current, { error });
      }
      case 'wrong-password':
        return sendAccount(request, reply.code(400), current, { error: { key: 'password.wrongCurrent' } });
      case 'rejected':
        return sendAccount(request, reply.code(400), current, { error: ruleText(outcome.problem) });
    }
  });

  accountProfileRoutes(app, ctx, (request, reply, current, profile) =>
    sendAccount(request, reply, current, undefined, profile),
  );

  app.post('/account/withdraw', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await accountForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const clientId = formValue(request, 'client_id');
    if (clientId) {
      const input = { userId: current.user.id, clientId, requester: current.requester, now: current.now };
      const count = await withdrawClient(ctx.store, input);
      if (count !== null) request.log.info({ event: 'grant_withdrawn', clientId, grants: count }, 'access withdrawn');
    }
    return reply.redirect('/account', 303);
  });

  app.post('/account/apps/delete', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await accountForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const clientId = formValue(request, 'client_id');
    if (clientId) {
      await deleteOwnedClient(ctx.store, {
        userId: current.user.id,
        clientId,
        requester: current.requester,
        now: current.now,
      });
    }
    return reply.redirect('/account', 303);
  });
}
