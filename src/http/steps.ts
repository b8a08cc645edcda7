// How each step of a sign-in shows on the HTTP side (./routes/login.ts verifies them all alike): its
// page as a later step of a pending sign-in (/login/<method>?pending=…), what a failure says there or
// on the sign-in page, and the authenticator app a sign-in that needs a second factor enrols on the
// way (its page is the `totp` step's).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { advance, HELD, holdSignIn, type PendingSignIn, type SignInDeps, soFar } from '../authn/flow.ts';
import { passkeyStep } from '../authn/passkeys/step.ts';
import type { StepFailure } from '../authn/step.ts';
import type { Refusal } from '../authn/throttle.ts';
import { totpFactor, totpStep } from '../authn/totp/step.ts';
import { enrolTotp, reofferTotp, totpOffer } from '../authn/totp/enrolment.ts';
import type { User } from '../store/users.ts';
import type { Text } from '../ui/layout.ts';
import { passkeyStepPage } from '../ui/passkeys.ts';
import { recoveryCodesPage, recoveryCodeStepPage, totpEnrolPage, totpStepPage } from '../ui/second-factors.ts';
import type { RouteContext } from './context.ts';
import { formValue } from './forms.ts';
import { throttledText } from './outcome.ts';
import { sendPage } from './pages.ts';
import { passkeyErrorCode } from './passkeys.ts';
import { requesterOf } from './requester.ts';
import { finishSignIn, keepInteractionLocale } from './sign-in.ts';

export type Opened = { pending: PendingSignIn; user: User };

export interface StepPageInput {
  method: string;
  sealed: string;
  opened: Opened;
  error?: Text;
  refusal?: Refusal;
}

/** "Too many wrong codes. Try again in 15 minutes." */
function tooMany(refusal: Refusal): Text {
  return { ...throttledText(refusal), key: refusal.locked ? 'mfa.code.locked' : 'mfa.code.throttled' };
}

/** What the code pages say of a wrong code. */
const WRONG_CODE: Record<string, Text> = {
  totp: { key: 'mfa.code.wrong' },
  'recovery-code': { key: 'mfa.recovery.wrong' },
};

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

/** The page of a later step, with what went wrong (400), or a refusal (429, Retry-After). */
export async function sendStepPage(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: StepPageInput,
): Promise<FastifyReply> {
  const { opened, sealed, refusal } = input;
  keepInteractionLocale(ctx, request, opened.pending.resume);
  if (refusal) reply.code(429).header('retry-after', String(refusal.retryAfter));
  const error = refusal ? tooMany(refusal) : input.error;
  const page = {
    pending: sealed,
    csrfToken: ctx.browser.csrfToken(request, reply),
    others: opened.pending.offered.filter((method) => method !== input.method),
    ...(error ? { error } : {}),
  };
  if (input.method === passkeyStep.method) {
    const { user, pending } = opened;
    const passkeys = await ctx.store.listPasskeys(user.id);
    const now = ctx.now();
    const options = await ctx.relyingParty.authenticationOptions({ user, passkeys, browser: pending.browser, now });
    return sendPage(reply, (ui) => passkeyStepPage(ui, { ...page, options: JSON.stringify(options) }));
  }
  return sendPage(noStore(reply), (ui) =>
    input.method === totpStep.method ? totpStepPage(ui, page) : recoveryCodeStepPage(ui, page),
  );
}

/** The `error` the sign-in page is sent back with after a failed first step. */
export function firstStepError(method: string, failure: StepFailure): string {
  return method === passkeyStep.method ? passkeyErrorCode(failure.reason) : 'login_failed';
}

/**
 * A later step that failed: a passkey's page again by its address (its ceremony starts afresh), a
 * code's page with what went wrong.
 */
export async function sendStepFailed(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: StepPageInput & { failure: StepFailure },
): Promise<FastifyReply> {
  if (input.method === passkeyStep.method) {
    const error = passkeyErrorCode(input.failure.reason);
    return reply.redirect(`/login/passkey?pending=${encodeURIComponent(input.sealed)}&error=${error}`, 303);
  }
  const { method, sealed, opened } = input;
  return sendStepPage(ctx, request, reply.code(400), { method, sealed, opened, error: WRONG_CODE[method]! });
}

/** Enrolment during a sign-in (the pending sign-in says `enrol`), unless the user has an app by now. */
export async function enrolling(ctx: RouteContext, method: string, opened: Opened): Promise<boolean> {
  return method === totpStep.method && opened.pending.enrol === true && !(await ctx.store.hasTotp(opened.user.id));
}

/** The enrolment's page: a new secret for the app, with the pending sign-in. */
export async function sendEnrolPage(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  sealed: string,
  opened: Opened,
) {
  const offer = await totpOffer(ctx.secondFactors, {
    user: opened.user,
    bind: () => opened.pending.browser,
    now: ctx.now(),
  });
  const csrfToken = ctx.browser.csrfToken(request, reply);
  return sendPage(noStore(reply), (ui) => totpEnrolPage(ui, { pending: sealed, csrfToken, offer }));
}

/** The enrolment step: the app added, then the recovery codes shown before the sign-in goes on. */
export async function enrolDuringSignIn(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { sealed: string; opened: Opened; flow: SignInDeps },
) {
  const { sealed, opened, flow } = input;
  const enrolment = ctx.secondFactors;
  const now = ctx.now();
  const attempt = {
    user: opened.user,
    session: null,
    enrolment: formValue(request, 'enrolment'),
    code: formValue(request, 'code'),
    isBound: (browser: string) => ctx.browser.isBound(request, browser),
    clientId: opened.pending.clientId,
    requester: requesterOf(request),
    now,
  };
  const outcome = await enrolTotp(enrolment, attempt);
  if (outcome.kind === 'wrong-code' || outcome.kind === 'expired') {
    const again = outcome.kind === 'wrong-code' ? await reofferTotp(enrolment, attempt) : undefined;
    const offer = again ?? (await totpOffer(enrolment, { user: opened.user, bind: () => opened.pending.browser, now }));
    const error: Text = { key: again ? 'mfa.enrol.wrong' : 'mfa.enrol.expired' };
    const csrfToken = ctx.browser.csrfToken(request, reply);
    return sendPage(noStore(reply.code(400)), (ui) => totpEnrolPage(ui, { pending: sealed, csrfToken, offer, error }));
  }
  if (outcome.kind !== 'enrolled' || outcome.recoveryCodes.length === 0) {
    // Enrolled now (or meanwhile, in another tab): the code typed was the app's, a factor of this sign-in.
    return finishSignIn(ctx, request, reply, await advance(flow, soFar(opened, now, totpFactor(now))));
  }
  const held = holdSignIn(flow, soFar(opened, now, totpFactor(now)), [HELD]);
  const page = {
    codes: outcome.recoveryCodes,
    csrfToken: ctx.browser.csrfToken(request, reply),
    then: { pending: held },
  };
  return sendPage(noStore(reply), (ui) => recoveryCodesPage(ui, page));
}
