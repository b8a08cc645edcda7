// Authenticator apps and recovery codes on the account page: add and remove an app, new recovery
// codes. Each POST calls one domain function (src/authn/totp/enrolment.ts,
// src/authn/recovery/renewal.ts). Their steps of a sign-in, and the app a sign-in may need enrolled
// on the way, are the sign-in's (./login.ts, ../steps.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renewRecoveryCodes } from '../../authn/recovery/renewal.ts';
import { enrolTotp, removeTotp, reofferTotp } from '../../authn/totp/enrolment.ts';
import type { Text } from '../../ui/layout.ts';
import { recoveryCodesPage, totpEnrolPage } from '../../ui/second-factors.ts';
import type { RouteContext } from '../context.ts';
import { formValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { accountForm, signInAgain } from '../sign-in.ts';

export function secondFactorRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const enrolment = ctx.secondFactors;
  const isBound = (request: FastifyRequest) => (browser: string) => ctx.browser.isBound(request, browser);
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /** The account page's forms (../sign-in.ts); with TESSERA_MFA=off there are none (the page shows no section). */
  async function form(request: FastifyRequest, reply: FastifyReply) {
    if (ctx.config.mfa.mode === 'off') {
      const refused = !ctx.browser.checkCsrf(request, formValue(request, 'csrf'));
      return { sent: refused ? csrfFailedPage(reply) : reply.redirect('/account', 303) };
    }
    return accountForm(ctx, request, reply);
  }
  const back = (reply: FastifyReply, note: string) => reply.redirect(`/account?mfa=${note}#second-factors`, 303);

  app.post('/account/totp', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await form(request, reply);
    if ('sent' in current) return current.sent;
    const input = {
      ...current,
      enrolment: formValue(request, 'enrolment'),
      code: formValue(request, 'code'),
      isBound: isBound(request),
      clientId: null,
    };
    const outcome = await enrolTotp(enrolment, input);
    if (outcome.kind === 'reauth') return signInAgain(reply);
    if (outcome.kind === 'wrong-code') {
      const offer = await reofferTotp(enrolment, input);
      if (!offer) return back(reply, 'expired');
      const error: Text = { key: 'mfa.enrol.wrong' };
      const page = { csrfToken: ctx.browser.csrfToken(request, reply), offer, error };
      return sendPage(noStore(reply.code(400)), (ui) => totpEnrolPage(ui, page));
    }
    if (outcome.kind !== 'enrolled') return back(reply, outcome.kind);
    if (outcome.recoveryCodes.length === 0) return back(reply, 'added');
    const page = {
      codes: outcome.recoveryCodes,
      csrfToken: ctx.browser.csrfToken(request, reply),
      then: { account: true } as const,
    };
    return sendPage(noStore(reply), (ui) => recoveryCodesPage(ui, page));
  });

  app.post('/account/totp/remove', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await form(request, reply);
    if ('sent' in current) return current.sent;
    const outcome = await removeTotp(enrolment, current);
    if (outcome.kind === 'reauth') return signInAgain(reply);
    return outcome.kind === 'removed' ? back(reply, 'removed') : reply.redirect('/account#second-factors', 303);
  });

  app.post('/account/recovery-codes', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const current = await form(request, reply);
    if ('sent' in current) return current.sent;
    const outcome = await renewRecoveryCodes(ctx.store, current);
    if (outcome.kind === 'reauth') return signInAgain(reply);
    if (outcome.kind === 'no-second-factor') return reply.redirect('/account#recovery-codes', 303);
    const page = {
      codes: outcome.codes,
      csrfToken: ctx.browser.csrfToken(request, reply),
      then: { account: true } as const,
    };
    return sendPage(noStore(reply), (ui) => recoveryCodesPage(ui, page));
  });
}
