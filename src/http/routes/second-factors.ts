// Authenticator apps and recovery codes: their steps of a sign-in (/login/totp and
// /login/recovery-code?pending=…, the enrolment a sign-in may need at /login/totp, and /login/continue
// after the recovery codes were shown), and the account page's forms (add and remove an app, new
// recovery codes). Each POST calls one domain function (src/authn/steps/totp.ts, recovery-code.ts,
// src/authn/totp/enrolment.ts, src/authn/recovery/renewal.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renewRecoveryCodes } from '../../authn/recovery/renewal.ts';
import type { Refusal } from '../../authn/throttle.ts';
import {
  HELD,
  holdSignIn,
  openPendingSignIn,
  type PendingSignIn,
  resumeHeldSignIn,
  soFar,
  continuePendingSignIn,
} from '../../authn/flow.ts';
import { confirmWithRecoveryCode, recoveryCodeStep } from '../../authn/recovery/step.ts';
import { confirmWithTotp, totpFactor, totpStep } from '../../authn/totp/step.ts';
import { enrolTotp, removeTotp, reofferTotp, totpOffer } from '../../authn/totp/enrolment.ts';
import type { User } from '../../store/users.ts';
import type { Text } from '../../ui/layout.ts';
import { recoveryCodesPage, recoveryCodeStepPage, totpEnrolPage, totpStepPage } from '../../ui/second-factors.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { sendPage } from '../pages.ts';
import { requesterOf } from '../requester.ts';
import { finishSignIn, sendExpired, signedInSession } from '../sign-in.ts';

type Opened = { pending: PendingSignIn; user: User };

/** "Too many wrong codes. Try again in 15 minutes." */
function tooMany(refusal: Refusal): Text {
  const { retryAfter } = refusal;
  const wait =
    retryAfter < 120 ? { seconds: retryAfter, minutes: 0 } : { seconds: 0, minutes: Math.ceil(retryAfter / 60) };
  return { key: refusal.locked ? 'mfa.code.locked' : 'mfa.code.throttled', values: wait };
}

export function secondFactorRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const deps = {
    store: ctx.store,
    pending: ctx.pending,
    throttle: ctx.config.throttle,
    observer: ctx.security,
    secrets: ctx.secondFactors.secrets,
  };
  const enrolment = ctx.secondFactors;
  const isBound = (request: FastifyRequest) => (browser: string) => ctx.browser.isBound(request, browser);
  const open = (request: FastifyRequest, sealed: string | undefined, method: string) =>
    openPendingSignIn(deps, { sealed, method, isBound: isBound(request), now: ctx.now() });
  const others = (opened: Opened, method: string) => opened.pending.offered.filter((m) => m !== method);
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /** The code page of a step again, with what went wrong (400), or a refusal (429, Retry-After). */
  function sendStep(
    request: FastifyRequest,
    reply: FastifyReply,
    input: { method: string; sealed: string; opened: Opened; error?: Text; refusal?: Refusal },
  ) {
    const { refusal } = input;
    if (refusal) reply.code(429).header('retry-after', String(refusal.retryAfter));
    const error = refusal ? tooMany(refusal) : input.error;
    const page = {
      pending: input.sealed,
      csrfToken: ctx.browser.csrfToken(request, reply),
      others: others(input.opened, input.method),
      ...(error ? { error } : {}),
    };
    return sendPage(noStore(reply), (ui) =>
      input.method === totpStep.method ? totpStepPage(ui, page) : recoveryCodeStepPage(ui, page),
    );
  }

  // Enrolment during a sign-in (the pending sign-in says `enrol`), unless the user has an app by now.
  const enrolling = async (opened: Opened) =>
    opened.pending.enrol === true && !(await ctx.store.hasTotp(opened.user.id));

  for (const method of [totpStep.method, recoveryCodeStep.method]) {
    app.get(`/login/${method}`, { config: { html: true } }, async (request, reply) => {
      const sealed = queryValue(request, 'pending');
      const opened = await open(request, sealed, method);
      if (!opened || !sealed) return sendExpired(reply);
      if (method === totpStep.method && (await enrolling(opened))) {
        const offer = await totpOffer(enrolment, {
          user: opened.user,
          bind: () => opened.pending.browser,
          now: ctx.now(),
        });
        const csrfToken = ctx.browser.csrfToken(request, reply);
        return sendPage(noStore(reply), (ui) => totpEnrolPage(ui, { pending: sealed, csrfToken, offer }));
      }
      return sendStep(request, reply, { method, sealed, opened });
    });

    app.post(`/login/${method}`, { config: { html: true, sameOrigin: true } }, async (request, reply) => {
      const sealed = formValue(request, 'pending');
      const opened = await open(request, sealed, method);
      if (!opened || !sealed) return sendExpired(reply);
      if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
      const now = ctx.now();
      const attempt = { code: formValue(request, 'code'), requester: requesterOf(request), now };
      if (method === totpStep.method && (await enrolling(opened))) return enrolStep(request, reply, sealed, opened);
      const outcome =
        method === totpStep.method
          ? await confirmWithTotp(deps, opened, attempt)
          : await confirmWithRecoveryCode(deps, opened, attempt);
      if (outcome.kind === 'refused')
        return sendStep(request, reply, { method, sealed, opened, refusal: outcome.refusal });
      if (outcome.kind === 'failed') {
        request.log.info({ event: 'second_factor_failed', method, reason: outcome.reason }, 'code refused');
        const error: Text = { key: method === totpStep.method ? 'mfa.code.wrong' : 'mfa.recovery.wrong' };
        return sendStep(request, reply.code(400), { method, sealed, opened, error });
      }
      return finishSignIn(ctx, request, reply, outcome);
    });
  }

  /** The enrolment step: the app added, then the recovery codes shown before the sign-in goes on. */
  async function enrolStep(request: FastifyRequest, reply: FastifyReply, sealed: string, opened: Opened) {
    const now = ctx.now();
    const input = {
      user: opened.user,
      session: null,
      enrolment: formValue(request, 'enrolment'),
      code: formValue(request, 'code'),
      isBound: isBound(request),
      clientId: opened.pending.clientId,
      requester: requesterOf(request),
      now,
    };
    const outcome = await enrolTotp(enrolment, input);
    if (outcome.kind === 'wrong-code' || outcome.kind === 'expired') {
      const again = outcome.kind === 'wrong-code' ? await reofferTotp(enrolment, input) : undefined;
      const offer =
        again ?? (await totpOffer(enrolment, { user: opened.user, bind: () => opened.pending.browser, now }));
      const error: Text = { key: again ? 'mfa.enrol.wrong' : 'mfa.enrol.expired' };
      const csrfToken = ctx.browser.csrfToken(request, reply);
      return sendPage(noStore(reply.code(400)), (ui) =>
        totpEnrolPage(ui, { pending: sealed, csrfToken, offer, error }),
      );
    }
    if (outcome.kind !== 'enrolled' || outcome.recoveryCodes.length === 0) {
      // Enrolled now (or meanwhile, in another tab): the code typed was the app's, a factor of this sign-in.
      return finishSignIn(ctx, request, reply, await continuePendingSignIn(deps, opened, totpFactor(now), now));
    }
    const held = holdSignIn(deps, soFar(opened, now, totpFactor(now)), [HELD]);
    const page = {
      codes: outcome.recoveryCodes,
      csrfToken: ctx.browser.csrfToken(request, reply),
      then: { pending: held },
    };
    return sendPage(noStore(reply), (ui) => recoveryCodesPage(ui, page));
  }

  app.post(`/login/${HELD}`, { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const opened = await open(request, formValue(request, 'pending'), HELD);
    if (!opened) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    return finishSignIn(ctx, request, reply, await resumeHeldSignIn(deps, opened, ctx.now()));
  });

  /**
   * The account page's forms: the form token, then the session (else the sign-in page); with
   * TESSERA_MFA=off there are none (the page shows no section).
   */
  async function accountForm(request: FastifyRequest, reply: FastifyReply) {
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return { sent: csrfFailedPage(reply) };
    if (ctx.config.mfa.mode === 'off') return { sent: reply.redirect('/account', 303) };
    const current = await signedInSession(ctx, request);
    if (!current) return { sent: reply.redirect('/account/login', 303) };
    return { ...current, requester: requesterOf(request), now: ctx.now() };
  }
  const back = (reply: FastifyReply, note: string) => reply.redirect(`/account?mfa=${note}#second-factors`, 303);
  const signInAgain = (reply: FastifyReply) => reply.redirect('/account/login?reauth=1', 303);

  app.post('/account/totp', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const input = {
      ...form,
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
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await removeTotp(enrolment, form);
    if (outcome.kind === 'reauth') return signInAgain(reply);
    return outcome.kind === 'removed' ? back(reply, 'removed') : reply.redirect('/account#second-factors', 303);
  });

  app.post('/account/recovery-codes', { config: { html: true, sameOrigin: true } }, async (request, reply) => {
    const form = await accountForm(request, reply);
    if ('sent' in form) return form.sent;
    const outcome = await renewRecoveryCodes(ctx.store, form);
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
