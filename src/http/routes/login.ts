// The sign-in: its page (/login for an authorization request, /account/login for the account page,
// the same page with the same ways in), and one handler for every step a form posts
// (/login/<method>: a password, a passkey, an authenticator code, a recovery code). The handler
// verifies the step (src/authn/registry.ts lists them, src/authn/step.ts says what they are), hands
// its factor to the flow (src/authn/flow.ts `advance`), and sends what comes next: the next step's
// page, or the session and what the sign-in was for. POST /login and POST /account/login are the
// password's step for a request and for the account page; /login/continue goes on with a sign-in held
// while the recovery codes of an app enrolled on the way were shown. Each POST answers 303.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { advance, begin, HELD, openPendingSignIn, soFar } from '../../authn/flow.ts';
import { type FormStep, type FormStepDeps, formStep } from '../../authn/registry.ts';
import type { FormAttempt } from '../../authn/step.ts';
import type { AuthorizationRequest } from '../../oauth/interaction.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { csrfFailedPage } from '../outcome.ts';
import { signInError, stepError } from '../passkeys.ts';
import { requesterOf } from '../requester.ts';
import { logSignInFailure } from '../sign-in-log.ts';
import {
  CONSOLE,
  finishSignIn,
  openInteraction,
  postedFor,
  purposeOf,
  requestOf,
  sendExpired,
  sendSignInPage,
  type SignInFor,
  signInPath,
  startUpstreamSignIn,
} from '../sign-in.ts';
import { enrolDuringSignIn, enrolling, firstStepError, sendEnrolPage, sendStepFailed, sendStepPage } from '../steps.ts';
import { directProvider } from '../upstream.ts';

/**
 * Where a first step's form came from: a request's sign-in page, the account's, the admin console's,
 * or either of the first two (a passkey's button).
 */
type From = 'request' | 'account' | 'console' | 'either';

export function loginRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const flow = { store: ctx.store, pending: ctx.pending };
  const deps: FormStepDeps = {
    store: ctx.store,
    throttle: ctx.config.throttle,
    observer: ctx.security,
    relyingParty: ctx.relyingParty,
    secrets: ctx.secondFactors.secrets,
  };
  const html = { config: { html: true } };
  const posted = { config: { html: true, sameOrigin: true } };
  const methodOf = (request: FastifyRequest) => (request.params as { method?: string }).method ?? '';

  app.get('/login', html, async (request, reply) => {
    const sealed = queryValue(request, 'interaction');
    const opened = await openInteraction(ctx, request, sealed);
    if (!opened || !sealed) return sendExpired(reply);
    return showSignIn(request, reply, { ...opened, sealed });
  });

  app.get('/account/login', html, (request, reply) => showSignIn(request, reply, null));
  app.get('/admin/login', html, (request, reply) => showSignIn(request, reply, CONSOLE));

  async function showSignIn(request: FastifyRequest, reply: FastifyReply, signInFor: SignInFor) {
    const error = queryValue(request, 'error');
    // idp_hint, a login_hint of a provider's domain, or TESSERA_DEFAULT_PROVIDER: straight to that
    // provider, unless the person came back for local sign-in (`local`, or a failed sign-in).
    const asked: Pick<AuthorizationRequest, 'idpHint' | 'loginHint'> = requestOf(signInFor)?.interaction.request ?? {};
    const direct = error || queryValue(request, 'local') ? undefined : await directProvider(ctx, asked);
    if (direct) return startUpstreamSignIn(ctx, request, reply, direct, signInFor);
    // Sent here by a change to how the user signs in, which needs a recent sign-in (src/authn/recent.ts).
    const reauth = queryValue(request, 'reauth') !== undefined;
    const note = reauth ? { note: { key: signInFor === CONSOLE ? 'admin.reauth' : 'login.reauth' } as const } : {};
    return sendSignInPage(ctx, request, reply, { for: signInFor, ...signInError(error), ...note });
  }

  app.post('/login', posted, (request, reply) => verifyStep(request, reply, 'password', 'request'));
  app.post('/account/login', posted, (request, reply) => verifyStep(request, reply, 'password', 'account'));
  app.post('/admin/login', posted, (request, reply) => verifyStep(request, reply, 'password', 'console'));
  app.post('/login/:method', posted, (request, reply) => verifyStep(request, reply, methodOf(request), 'either'));

  /** Any step: a later one with the form's `pending`, else a first one for what its page was for. */
  async function verifyStep(request: FastifyRequest, reply: FastifyReply, method: string, from: From) {
    const step = formStep(method);
    if (!step) return reply.callNotFound();
    const attempt = {
      field: (name: string) => formValue(request, name),
      requester: requesterOf(request),
      knownDevice: (username: string) => ctx.browser.knownDevice(request, username),
      isBound: (browser: string) => ctx.browser.isBound(request, browser),
      now: ctx.now(),
    };
    const pending = from === 'either' ? formValue(request, 'pending') : undefined;
    if (pending !== undefined) return laterStep(request, reply, step, pending, attempt);
    // The passkey's button posts the interaction of the page it is on: a request's, the console's, or none.
    const field = from === 'account' ? '' : from === 'console' ? CONSOLE : (formValue(request, 'interaction') ?? '');
    const signInFor = await postedFor(ctx, request, field);
    const forRequest = requestOf(signInFor ?? null) !== null;
    if (!step.first || signInFor === undefined || (from === 'request' && !forRequest)) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    const purpose = purposeOf(ctx, request, reply, signInFor);
    const verified = await step.verify(deps, { ...attempt, user: null, clientId: purpose.clientId });
    if (verified.kind === 'refused' || verified.kind === 'failed') {
      // A passkey names its user itself: nothing was typed.
      const typed = method === 'passkey' ? null : (formValue(request, 'username') ?? '');
      logSignInFailure(request, { method, outcome: verified, username: typed, clientId: purpose.clientId });
    }
    if (verified.kind === 'refused') {
      const username = formValue(request, 'username') ?? '';
      return sendSignInPage(ctx, request, reply, { for: signInFor, username, refusal: verified.refusal });
    }
    if (verified.kind === 'failed') {
      return reply.redirect(signInPath(signInFor, `error=${firstStepError(method, verified)}`), 303);
    }
    return finishSignIn(ctx, request, reply, await advance(flow, begin(verified, purpose, attempt.now)));
  }

  async function laterStep(
    request: FastifyRequest,
    reply: FastifyReply,
    step: FormStep,
    sealed: string,
    attempt: Omit<FormAttempt, 'user' | 'clientId'>,
  ) {
    const { method } = step;
    const opened = await openPendingSignIn(flow, { sealed, method, isBound: attempt.isBound, now: attempt.now });
    if (!opened) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    if (await enrolling(ctx, method, opened)) return enrolDuringSignIn(ctx, request, reply, { sealed, opened, flow });
    const { user, pending } = opened;
    const verified = await step.verify(deps, { ...attempt, user, clientId: pending.clientId });
    if (verified.kind === 'refused' || verified.kind === 'failed') {
      logSignInFailure(request, { method, outcome: verified, username: user.username, clientId: pending.clientId });
    }
    const page = { method, sealed, opened };
    if (verified.kind === 'refused') return sendStepPage(ctx, request, reply, { ...page, refusal: verified.refusal });
    if (verified.kind === 'failed') return sendStepFailed(ctx, request, reply, { ...page, failure: verified });
    return finishSignIn(ctx, request, reply, await advance(flow, soFar(opened, attempt.now, verified.factor)));
  }

  // A later step's page: the pending sign-in must offer the step (a first step has no such page).
  app.get('/login/:method', html, async (request, reply) => {
    const step = formStep(methodOf(request));
    if (!step?.second) return reply.callNotFound();
    const sealed = queryValue(request, 'pending');
    const isBound = (browser: string) => ctx.browser.isBound(request, browser);
    const opened = await openPendingSignIn(flow, { sealed, method: step.method, isBound, now: ctx.now() });
    if (!opened || !sealed) return sendExpired(reply);
    if (await enrolling(ctx, step.method, opened)) return sendEnrolPage(ctx, request, reply, sealed, opened);
    const page = { method: step.method, sealed, opened, ...stepError(queryValue(request, 'error')) };
    return sendStepPage(ctx, request, reply, page);
  });

  app.post(`/login/${HELD}`, posted, async (request, reply) => {
    const isBound = (browser: string) => ctx.browser.isBound(request, browser);
    const sealed = formValue(request, 'pending');
    const opened = await openPendingSignIn(flow, { sealed, method: HELD, isBound, now: ctx.now() });
    if (!opened) return sendExpired(reply);
    if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return csrfFailedPage(reply);
    return finishSignIn(ctx, request, reply, await advance(flow, soFar(opened, ctx.now())));
  });
}
