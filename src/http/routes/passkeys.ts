// Passkeys: the pages' scripts, a sign-in with a passkey (the sign-in pages' button and autofill), a
// passkey as a later step of a sign-in (/login/passkey?pending=…), and the account page's add, rename
// and remove. Each POST calls one domain function (src/authn/steps/passkey.ts,
// src/authn/passkeys/enrolment.ts) and answers 303.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addPasskey, removePasskey, renamePasskey } from '../../authn/passkeys/enrolment.ts';
import { accountSignIn } from '../../authn/policy.ts';
import { openPendingSignIn } from '../../authn/flow.ts';
import { confirmWithPasskey, passkeyStep, signInWithPasskey } from '../../authn/passkeys/step.ts';
import { passkeyStepPage } from '../../ui/passkeys.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { passkeyErrorCode, stepError } from '../passkeys.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { finishSignIn, keepInteractionLocale, openInteraction, sendExpired, signedInSession } from '../sign-in.ts';

/** Ours (src/ui/assets/passkeys.js), and @simplewebauthn/browser's bundle as its package ships it. */
const SCRIPT = readFileSync(new URL('../../ui/assets/passkeys.js', import.meta.url), 'utf8');
const LIBRARY = readFileSync(
  new URL('../dist/bundle/index.umd.min.js', import.meta.resolve('@simplewebauthn/browser')),
  'utf8',
);

export function passkeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = { store: ctx.store, pending: ctx.pending, relyingParty: ctx.relyingParty, observer: ctx.security };
  const enrolment = { store: ctx.store, relyingParty: ctx.relyingParty };
  const isBound = (request: FastifyRequest) => (browser: string) => ctx.browser.isBound(request, browser);
  const refused = (request: FastifyRequest, failure: { reason: string; detail?: string }) =>
    request.log.info({ event: 'passkey_refused', reason: failure.reason, detail: failure.detail }, 'passkey refused');

  for (const [path, body] of [
    ['/assets/passkeys.js', SCRIPT],
    ['/assets/simplewebauthn-browser.js', LIBRARY],
  ] as const) {
    app.get(path, async (_, reply) =>
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .header('x-content-type-options', 'nosniff')
        .send(body),
    );
  }

  /** A later step's pending sign-in, if it is genuine, this browser's, and offers a passkey. */
  const openStep = (request: FastifyRequest, sealed: string | undefined) =>
    openPendingSignIn(deps, { sealed, method: passkeyStep.method, isBound: isBound(request), now: ctx.now() });

  // A sign-in with a passkey from the sign-in page (with its `interaction`) or the account's (none);
  // with `pending`, a passkey as a later step.
  app.post('/login/passkey', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    if (formValue(request, 'pending') !== undefined) return laterStep(request, reply);
    const sealed = formValue(request, 'interaction') ?? '';
    const opened = sealed ? await openInteraction(ctx, request, sealed) : undefined;
    if (sealed && !opened) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const outcome = await signInWithPasskey(deps, {
      response: formValue(request, 'response'),
      clientId: opened?.interaction.request.clientId ?? null,
      requester: requesterOf(request),
      isBound: isBound(request),
      need: opened?.interaction.need ?? accountSignIn(ctx.config.mfa.mode),
      resume: opened ? sealed : null,
      bind: () => ctx.browser.binding(request, reply),
      now: ctx.now(),
    });
    if (outcome.kind === 'failed') {
      refused(request, outcome);
      const error = passkeyErrorCode(outcome.reason);
      const page = opened ? `/login?interaction=${encodeURIComponent(sealed)}&` : '/account/login?';
      return reply.redirect(`${page}error=${error}`, 303);
    }
    return finishSignIn(ctx, request, reply, outcome);
  });

  app.get('/login/passkey', { config: { html: true } }, async (request, reply) => {
    const sealed = queryValue(request, 'pending');
    const opened = await openStep(request, sealed);
    if (!opened || !sealed) return sendExpired(reply);
    const { pending, user } = opened;
    keepInteractionLocale(ctx, request, pending.resume);
    const passkeys = await ctx.store.listPasskeys(user.id);
    const now = ctx.now();
    const options = await ctx.relyingParty.authenticationOptions({ user, passkeys, browser: pending.browser, now });
    const page = {
      pending: sealed,
      csrfToken: ctx.browser.csrfToken(request, reply),
      options: JSON.stringify(options),
      others: pending.offered.filter((method) => method !== passkeyStep.method),
      ...stepError(queryValue(request, 'error')),
    };
    return sendPage(reply, (ui) => passkeyStepPage(ui, page));
  });

  async function laterStep(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const sealed = formValue(request, 'pending');
    const opened = await openStep(request, sealed);
    if (!opened || !sealed) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const outcome = await confirmWithPasskey(deps, opened, {
      response: formValue(request, 'response'),
      clientId: opened.pending.clientId,
      requester: requesterOf(request),
      isBound: isBound(request),
      now: ctx.now(),
    });
    if (outcome.kind === 'failed') {
      refused(request, outcome);
      const error = passkeyErrorCode(outcome.reason);
      return reply.redirect(`/login/passkey?pending=${encodeURIComponent(sealed)}&error=${error}`, 303);
    }
    return finishSignIn(ctx, request, reply, outcome);
  }

  /** The account page's forms: the form token, then the session (else the sign-in page). */
  async function accountForm(request: FastifyRequest, reply: FastifyReply) {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return { sent: csrfFailedPage(reply) };
    const current = await signedInSession(ctx, request);
    if (!current) return { sent: reply.redirect('/account/login', 303) };
    return { ...current, requester: requesterOf(request), now: ctx.now() };
  }
  const back = (reply: FastifyReply, note: string) => reply.redirect(`/account?passkey=${note}#passkeys`, 303);
  const signInAgain = (reply: FastifyReply) => reply.redirect('/account/login?reauth=1', 303);

  app.post('/account/passkeys', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await addPasskey(enrolment, {
      ...form,
      response: formValue(request, 'response'),
      name: formValue(request, 'name'),
      isBound: isBound(request),
    });
    if (outcome.kind === 'added') return back(reply, 'added');
    if (outcome.kind === 'reauth') return signInAgain(reply);
    refused(request, outcome);
    return back(reply, outcome.reason === 'already_registered' ? 'registered' : 'failed');
  });

  app.post('/account/passkeys/rename', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const input = { ...form, id: formValue(request, 'id') ?? '', name: formValue(request, 'name') };
    return back(reply, (await renamePasskey(enrolment, input)) ? 'renamed' : 'no-name');
  });

  app.post('/account/passkeys/remove', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await removePasskey(enrolment, { ...form, id: formValue(request, 'id') ?? '' });
    if (outcome.kind === 'reauth') return signInAgain(reply);
    if (outcome.kind === 'not-found') return reply.redirect('/account#passkeys', 303);
    return back(reply, outcome.kind);
  });
}
