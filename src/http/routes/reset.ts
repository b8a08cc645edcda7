// Password reset pages (src/account/reset.ts): "Forgot your password?", the link's page and the new
// password. A user with a second factor gives it between the link and the password: the link's page
// hands the sign-in policy a `mail-link` factor, the second factor's page (/login/<method>) completes
// the sign-in and sends the browser back to /reset/password with it sealed (`pending`), never as a
// session (../sign-in.ts finishSignIn). Once the new password is set, that sign-in becomes the
// browser's session. Only registered when mail is available (src/app.ts). The token travels as
// `token`, the held sign-in as `pending` and the reset as `reset`, which the logs redact (../log-safety.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { completePasswordReset, requestPasswordReset, resetNeeds, type ResetOutcome } from '../../account/reset.ts';
import { ANY_SIGN_IN } from '../../authn/requirement.ts';
import { advance, begin, openPendingSignIn } from '../../authn/flow.ts';
import type { Factor } from '../../authn/factor.ts';
import { MAIL_LINK, mailLinkFactor, mailLinkStep, openReset } from '../../authn/mail-link/step.ts';
import type { Text } from '../../ui/layout.ts';
import { choosePasswordPage, forgotPage, notePage } from '../../ui/mail-pages.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage, sendError, throttledText } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { beginSession, finishSignIn, HELD_FOR_PAGE, mailDeps } from '../sign-in.ts';
import { ruleText } from './account.ts';

/** "Try again in 15 minutes": the wait, as the catalogues' throttled messages take it. */
export function throttledFor(retryAfter: number): Text {
  return { ...throttledText({ retryAfter }), key: 'mail.page.throttled' };
}

export function sendLinkDead(reply: FastifyReply): FastifyReply {
  const description = 'the link is unknown, expired or used, or its password changed';
  return sendError(reply, 'mail.page.linkDead.title', { description, says: 'mail.page.linkDead.says' });
}

export function resetRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = (request: FastifyRequest) => ({
    store: ctx.store,
    mail: mailDeps(ctx, request),
    minLength: ctx.config.passwordMinLength,
  });

  app.get('/reset/request', { config: { html: true } }, async (request, reply) => {
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendPage(reply, (ui) => forgotPage(ui, { csrfToken }));
  });

  app.post('/reset/request', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const identifier = formValue(request, 'identifier') ?? '';
    const input = { identifier, requester: requesterOf(request), now: ctx.now() };
    const outcome = await requestPasswordReset(deps(request), input);
    if (outcome.kind === 'refused') {
      const { retryAfter } = outcome.refusal;
      const error = throttledFor(retryAfter);
      reply.code(429).header('retry-after', String(retryAfter));
      const csrfToken = ctx.browser.csrfToken(request, reply);
      return sendPage(reply, (ui) => forgotPage(ui, { csrfToken, error }));
    }
    const sent = { title: { key: 'mail.page.checkMail' }, body: { key: 'mail.page.forgotSent' } } as const;
    return sendPage(reply, (ui) => notePage(ui, sent, false));
  });

  /** The link: the new password's form, or first the user's second factor. */
  app.get('/reset', { config: { html: true } }, async (request, reply) => {
    const now = ctx.now();
    const token = queryValue(request, 'token');
    const verified = await mailLinkStep.verify(ctx.store, { token, now });
    if (verified.kind !== 'verified' || !token) return sendLinkDead(reply);
    const needs = await resetNeeds(ctx.store, verified, [verified.factor]);
    if (needs.kind === 'ready') return sendChoose(request, reply, { token }, verified.user.username);
    // The link's factor begins a sign-in that comes back to /reset/password (the step carries it).
    const purpose = {
      need: ANY_SIGN_IN,
      resume: null,
      clientId: null,
      bind: () => ctx.browser.binding(request, reply),
    };
    const progress = await advance({ store: ctx.store, pending: ctx.pending }, begin(verified, purpose, now));
    return finishSignIn(ctx, request, reply, progress);
  });

  app.post('/reset', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const token = formValue(request, 'token') ?? '';
    const now = ctx.now();
    return answer(request, reply, { token }, { factors: [mailLinkFactor(now)], authTime: now });
  });

  /** After a second factor: the reset's sign-in, held sealed (no session yet) for this page. */
  app.get('/reset/password', { config: { html: true } }, async (request, reply) => {
    const fields = { reset: queryValue(request, 'reset') ?? '', pending: queryValue(request, 'pending') ?? '' };
    const held = await heldSignIn(request, fields);
    if (!held) return sendLinkDead(reply);
    return sendChoose(request, reply, fields, held.username);
  });

  app.post('/reset/password', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const fields = { reset: formValue(request, 'reset') ?? '', pending: formValue(request, 'pending') ?? '' };
    const held = await heldSignIn(request, fields);
    if (!held) return sendLinkDead(reply);
    return answer(request, reply, fields, held);
  });

  /**
   * The sign-in held for the reset `reset` (./sign-in.ts finishSignIn): genuine, unexpired, started in
   * this browser, of the reset's user, begun with its link, for this reset and no other.
   */
  async function heldSignIn(request: FastifyRequest, fields: Held) {
    const now = ctx.now();
    const hash = fields.reset;
    const opened = /^[0-9a-f]{64}$/.test(hash) ? await openReset(ctx.store, { hash, now }) : undefined;
    if (!opened) return undefined;
    const held = await openPendingSignIn(ctx, {
      sealed: fields.pending,
      method: HELD_FOR_PAGE,
      isBound: (browser) => ctx.browser.isBound(request, browser),
      now,
    });
    if (!held || held.user.id !== opened.user.id || held.pending.resume !== heldPath(hash)) return undefined;
    const { factors, authTime } = held.pending;
    const linked = factors.some((f) => f.method === MAIL_LINK && f.at >= opened.token.createdAt);
    return linked ? { username: opened.user.username, factors, authTime } : undefined;
  }

  function sendChoose(
    request: FastifyRequest,
    reply: FastifyReply,
    fields: { token: string } | Held,
    username: string,
    error?: Text,
  ) {
    const action = 'token' in fields ? '/reset' : '/reset/password';
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = { kind: 'reset', action, fields, csrfToken, username } as const;
    return sendPage(reply, (ui) => choosePasswordPage(ui, { ...page, ...(error ? { error } : {}) }));
  }

  /** The new password; once set, the reset's sign-in (`signIn`) becomes this browser's session. */
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    fields: { token: string } | Held,
    signIn: { factors: readonly Factor[]; authTime: number },
  ) {
    const password = formValue(request, 'password') ?? '';
    const now = ctx.now();
    const link = 'token' in fields ? { token: fields.token } : { hash: fields.reset };
    const opened = await openReset(ctx.store, { ...link, now });
    if (!opened) return sendLinkDead(reply);
    if (password !== (formValue(request, 'confirm') ?? password)) {
      return sendChoose(request, reply.code(400), fields, opened.user.username, { key: 'mail.page.choose.mismatch' });
    }
    const outcome: ResetOutcome = await completePasswordReset(deps(request), {
      ...link,
      factors: signIn.factors,
      password,
      requester: requesterOf(request),
      now,
    });
    switch (outcome.kind) {
      case 'reset': {
        // Every session ended; this browser's is the reset's sign-in, started now.
        const signedIn = { userId: outcome.user.id, authTime: signIn.authTime, factors: [...signIn.factors] };
        await beginSession(ctx, request, reply, { signedIn, user: outcome.user, clientId: null });
        // The account page says the password changed, and which providers still sign the person in.
        return reply.redirect('/account?password=changed', 303);
      }
      case 'rejected':
        return sendChoose(request, reply.code(400), fields, opened.user.username, ruleText(outcome.rule));
      case 'second-factor':
        // A second factor enrolled since the link was opened: through the link again.
        return reply.redirect('token' in fields ? `/reset?token=${encodeURIComponent(fields.token)}` : '/', 303);
      case 'invalid':
        return sendLinkDead(reply);
    }
  }
}

/** The reset's sign-in, held sealed after its second factor (`pending`), and the reset it is for. */
type Held = { reset: string; pending: string };

/** Where a reset's sign-in goes back to after its second factor: its hash names the reset. */
const heldPath = (hash: string) => `/reset/password?reset=${hash}`;
