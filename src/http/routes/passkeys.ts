// Passkeys: the pages' scripts, and the account page's add, rename and remove (each POST calls one
// domain function of src/authn/passkeys/enrolment.ts and answers 303). A sign-in with a passkey, first
// or later step, is the sign-in's (./login.ts, POST /login/passkey).
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addPasskey, removePasskey, renamePasskey } from '../../authn/passkeys/enrolment.ts';
import type { RouteContext } from '../context.ts';
import { scriptRoutes } from './assets.ts';
import { formValue } from '../forms.ts';
import { accountForm, signInAgain } from '../sign-in.ts';

/** Ours (src/ui/assets/passkeys.js), and @simplewebauthn/browser's bundle as its package ships it. */
const SCRIPT = readFileSync(new URL('../../ui/assets/passkeys.js', import.meta.url), 'utf8');
const LIBRARY = readFileSync(
  new URL('../dist/bundle/index.umd.min.js', import.meta.resolve('@simplewebauthn/browser')),
  'utf8',
);

export function passkeyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const enrolment = { store: ctx.store, relyingParty: ctx.relyingParty };
  const isBound = (request: FastifyRequest) => (browser: string) => ctx.browser.isBound(request, browser);
  const refused = (request: FastifyRequest, failure: { reason: string; detail?: string }) =>
    request.log.info({ event: 'passkey_refused', reason: failure.reason, detail: failure.detail }, 'passkey refused');

  scriptRoutes(app, [
    ['/assets/passkeys.js', SCRIPT],
    ['/assets/simplewebauthn-browser.js', LIBRARY],
  ]);

  const back = (reply: FastifyReply, note: string) => reply.redirect(`/account?passkey=${note}#passkeys`, 303);

  app.post('/account/passkeys', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(ctx, request, reply);
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
    const form = await accountForm(ctx, request, reply);
    if ('sent' in form) return form.sent;
    const input = { ...form, id: formValue(request, 'id') ?? '', name: formValue(request, 'name') };
    return back(reply, (await renamePasskey(enrolment, input)) ? 'renamed' : 'no-name');
  });

  app.post('/account/passkeys/remove', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(ctx, request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await removePasskey(enrolment, { ...form, id: formValue(request, 'id') ?? '' });
    if (outcome.kind === 'reauth') return signInAgain(reply);
    if (outcome.kind === 'not-found') return reply.redirect('/account#passkeys', 303);
    return back(reply, outcome.kind);
  });
}
