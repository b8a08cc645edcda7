// The pages mails' links open, besides a reset's (./reset.ts): an invitation's (choose a password),
// an address's confirmation, and sign-up (TESSERA_SIGNUP=open) with its confirmation; and the
// account page's change of address. Only registered when mail is available (src/app.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changeEmail, confirmEmail } from '../../account/email.ts';
import { acceptInvitation, openInvitation } from '../../account/invitations.ts';
import { confirmSignup, requestSignup, type SignupProblem } from '../../account/signup.ts';
import type { Text } from '../../ui/layout.ts';
import { choosePasswordPage, notePage, signupPage } from '../../ui/mail-pages.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { accountForm, mailDeps, signInAgain } from '../sign-in.ts';
import { ruleText } from './account.ts';
import { sendLinkDead, throttledFor } from './reset.ts';

/** What the sign-up form says of what is wrong with it. */
function signupProblem(problem: SignupProblem, domains: readonly string[]): Text {
  switch (problem) {
    case 'username':
      return { key: 'mail.page.signup.badUsername' };
    case 'email':
      return { key: 'mail.page.badEmail' };
    case 'domain':
      return { key: 'mail.page.signup.domain', values: { domains: domains.join(', ') } };
    case 'taken':
      return { key: 'mail.page.signup.taken' };
  }
}

const READY = { key: 'mail.page.ready.title' } as const;

export function mailLinkRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const minLength = ctx.config.passwordMinLength;

  function sendInvitation(request: FastifyRequest, reply: FastifyReply, token: string, username: string, error?: Text) {
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = { kind: 'invite', action: '/invite', fields: { token }, csrfToken, username } as const;
    return sendPage(reply, (ui) => choosePasswordPage(ui, { ...page, ...(error ? { error } : {}) }));
  }

  app.get('/invite', { config: { html: true } }, async (request, reply) => {
    const token = queryValue(request, 'token');
    const opened = await openInvitation(ctx.store, token, ctx.now());
    if (!opened || !token) return sendLinkDead(reply);
    return sendInvitation(request, reply, token, opened.user.username);
  });

  app.post('/invite', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const token = formValue(request, 'token') ?? '';
    const password = formValue(request, 'password') ?? '';
    const now = ctx.now();
    if (password !== (formValue(request, 'confirm') ?? password)) {
      const opened = await openInvitation(ctx.store, token, now);
      if (!opened) return sendLinkDead(reply);
      const mismatch = { key: 'mail.page.choose.mismatch' } as const;
      return sendInvitation(request, reply.code(400), token, opened.user.username, mismatch);
    }
    const deps = { store: ctx.store, mail: mailDeps(ctx, request), minLength };
    const outcome = await acceptInvitation(deps, { token, password, requester: requesterOf(request), now });
    if (outcome.kind === 'invalid') return sendLinkDead(reply);
    if (outcome.kind === 'rejected') {
      const opened = await openInvitation(ctx.store, token, now);
      if (!opened) return sendLinkDead(reply);
      return sendInvitation(request, reply.code(400), token, opened.user.username, ruleText(outcome.rule));
    }
    return sendPage(reply, (ui) => notePage(ui, { title: READY, body: { key: 'mail.page.inviteDone.body' } }));
  });

  app.get('/verify', { config: { html: true } }, async (request, reply) => {
    const input = { token: queryValue(request, 'token'), requester: requesterOf(request), now: ctx.now() };
    const outcome = await confirmEmail({ store: ctx.store, mail: mailDeps(ctx, request) }, input);
    if (outcome === 'invalid') return sendLinkDead(reply);
    const verified = { title: { key: 'mail.page.verified.title' }, body: { key: 'mail.page.verified.body' } } as const;
    return sendPage(reply, (ui) => notePage(ui, verified));
  });

  app.post('/account/email', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await accountForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const outcome = await changeEmail(
      { store: ctx.store, mail: mailDeps(ctx, request) },
      { ...current, email: formValue(request, 'email') },
    );
    if (outcome.kind === 'reauth') return signInAgain(reply);
    const note = outcome.kind === 'sent' ? 'sent' : outcome.kind === 'refused' ? 'refused' : 'invalid';
    return reply.redirect(`/account?email=${note}#email`, 303);
  });

  if (ctx.config.signup.mode !== 'open') return;
  const { domains } = ctx.config.signup;

  app.get('/signup', { config: { html: true } }, async (request, reply) => {
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendPage(reply, (ui) => signupPage(ui, { csrfToken, domains }));
  });

  app.post('/signup', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const form = {
      username: formValue(request, 'username') ?? '',
      email: formValue(request, 'email') ?? '',
      password: formValue(request, 'password') ?? '',
    };
    const deps = { store: ctx.store, mail: mailDeps(ctx, request), minLength, domains };
    const outcome = await requestSignup(deps, { ...form, requester: requesterOf(request), now: ctx.now() });
    if (outcome.kind === 'sent') {
      const sent = { title: { key: 'mail.page.checkMail' }, body: { key: 'mail.page.signup.sent' } } as const;
      return sendPage(reply, (ui) => notePage(ui, sent, false));
    }
    const error =
      outcome.kind === 'invalid'
        ? signupProblem(outcome.problem, domains)
        : outcome.kind === 'rejected'
          ? ruleText(outcome.rule)
          : throttledFor(outcome.refusal.retryAfter);
    reply.code(outcome.kind === 'refused' ? 429 : 400);
    if (outcome.kind === 'refused') reply.header('retry-after', String(outcome.refusal.retryAfter));
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const page = { csrfToken, domains, error, username: form.username, email: form.email };
    return sendPage(reply, (ui) => signupPage(ui, page));
  });

  app.get('/signup/confirm', { config: { html: true } }, async (request, reply) => {
    const input = { token: queryValue(request, 'token'), requester: requesterOf(request), now: ctx.now() };
    const outcome = await confirmSignup({ store: ctx.store }, input);
    if (outcome === 'invalid') return sendLinkDead(reply);
    if (outcome === 'taken') {
      const taken = { title: { key: 'mail.page.signup.title' }, body: { key: 'mail.page.signup.taken' } } as const;
      return sendPage(reply.code(409), (ui) => notePage(ui, taken, false));
    }
    return sendPage(reply, (ui) => notePage(ui, { title: READY, body: { key: 'mail.page.signedUp.body' } }));
  });
}
