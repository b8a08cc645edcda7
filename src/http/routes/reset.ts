// Password reset pages (src/account/reset.ts): "Forgot your password?", the link's page and the new
// password. A user with a second factor gives it between the link and the password: the link's page
// hands the sign-in policy a `mail-link` factor, the second factor's page (/login/<method>) finishes
// the sign-in and sends the browser back to /reset/password, which takes the session's factors.
// Only registered when mail is available (src/app.ts). The token travels as `token`, which the logs
// redact (../log-safety.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { completePasswordReset, requestPasswordReset, resetNeeds, type ResetOutcome } from '../../account/reset.ts';
import { ANY_SIGN_IN } from '../../authn/requirement.ts';
import { advance, begin } from '../../authn/flow.ts';
import type { Factor } from '../../authn/factor.ts';
import { MAIL_LINK, mailLinkFactor, mailLinkStep, openReset } from '../../authn/mail-link/step.ts';
import type { Text } from '../../ui/layout.ts';
import { choosePasswordPage, forgotPage, notePage } from '../../ui/mail-pages.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage, sendError, throttledText } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { finishSignIn, mailDeps } from '../sign-in.ts';
import { ruleText } from './account.ts';

/** "Try again in 15 minutes": the wait, as the catalogues' throttled messages take it. */
export function throttledFor(retryAfter: number): Text {
  return { ...throttledText({ retryAfter }), key: 'mail.page.throttled' };
}

export function sendLinkDead(reply: FastifyReply): FastifyReply {
  const description = 'the link is unknown, expired or used, or its password changed';
  return sendError(reply, 'mail.page.linkDead.title', { description, says: 'mail.page.linkDead.says' });
}

/** What a done reset says: and which upstream providers still sign the person in, if any. */
function resetDone(outcome: { linked: string[] }): Text {
  if (outcome.linked.length === 0) return { key: 'mail.page.resetDone.body' };
  return { key: 'mail.page.resetDone.linked', values: { providers: outcome.linked.join(', ') } };
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
    return answer(request, reply, { token }, [mailLinkFactor(now)]);
  });

  /** After a second factor: the session's sign-in, which began with this reset's link. */
  app.get('/reset/password', { config: { html: true } }, async (request, reply) => {
    const hash = queryValue(request, 'reset') ?? '';
    const signedIn = await resetSession(request, hash);
    if (!signedIn) return sendLinkDead(reply);
    return sendChoose(request, reply, { reset: hash }, signedIn.username);
  });

  app.post('/reset/password', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const hash = formValue(request, 'reset') ?? '';
    const signedIn = await resetSession(request, hash);
    if (!signedIn) return sendLinkDead(reply);
    return answer(request, reply, { reset: hash }, signedIn.factors);
  });

  /** The browser's session, when its sign-in began with the link of the reset `hash` (still good). */
  async function resetSession(request: FastifyRequest, hash: string) {
    const now = ctx.now();
    const opened = /^[0-9a-f]{64}$/.test(hash) ? await openReset(ctx.store, { hash, now }) : undefined;
    const session = opened && (await ctx.browser.session(request, now));
    if (!opened || !session || session.userId !== opened.user.id) return undefined;
    const linked = session.factors.some((f) => f.method === MAIL_LINK && f.at >= opened.token.createdAt);
    return linked ? { username: opened.user.username, factors: session.factors } : undefined;
  }

  function sendChoose(
    request: FastifyRequest,
    reply: FastifyReply,
    fields: { token: string } | { reset: string },
    username: string,
    error?: Text,
  ) {
    const action = 'token' in fields ? '/reset' : '/reset/password';
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = { kind: 'reset', action, fields, csrfToken, username } as const;
    return sendPage(reply, (ui) => choosePasswordPage(ui, { ...page, ...(error ? { error } : {}) }));
  }

  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    fields: { token: string } | { reset: string },
    factors: readonly Factor[],
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
      factors,
      password,
      requester: requesterOf(request),
      now,
    });
    switch (outcome.kind) {
      case 'reset':
        // Every session ended, this browser's too: its cookie goes.
        await ctx.browser.endSession(request, reply, now);
        return sendPage(reply, (ui) =>
          notePage(ui, { title: { key: 'mail.page.resetDone.title' }, body: resetDone(outcome) }),
        );
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
