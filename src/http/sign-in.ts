// What every sign-in page shares (src/authn): what a sign-in is for (an authorization request, or the
// account page), its page with every way in, the end of each step (the next step's page, or a session
// and then the request it was for), and the account page's forms' session. A step's route verifies
// the step and hands its factor to the flow (src/authn/flow.ts), and the progress to `finishSignIn`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountSignIn, consoleSignIn } from '../authn/policy.ts';
import { ANY_SIGN_IN, type Requirement } from '../authn/requirement.ts';
import { type BrowserSession, type SignedIn, sessionUser } from '../authn/session.ts';
import { advance, CONSOLE, holdSignIn, type LinkOnSignIn, type SignInProgress } from '../authn/flow.ts';
import { shortfall } from '../authn/sufficiency.ts';
import type { Refusal } from '../authn/throttle.ts';
import { continueAuthorization } from '../oauth/authorize/index.ts';
import type { Interaction } from '../oauth/interaction.ts';
import { clientVetting } from '../oauth/registration/trust.ts';
import type { Client } from '../store/clients.ts';
import type { User } from '../store/users.ts';
import type { Text } from '../ui/layout.ts';
import { loginPage } from '../ui/pages.ts';
import type { RouteContext } from './context.ts';
import { formValue } from './forms.ts';
import { mailAvailable, type MailDeps } from '../mail/compose.ts';
import { translator } from '../i18n/index.ts';
import { localeOf, sendPage } from './pages.ts';
import { csrfFailedPage, sendError, sendOutcome, throttledText } from './outcome.ts';
import { passkeySignInOptions } from './passkeys.ts';
import { requesterOf } from './requester.ts';
import { useInteractionLocales } from './pages.ts';
import { providerButtonsOf, sendLinkRefused, sessionWithLink, startUpstream } from './upstream.ts';

export { CONSOLE } from '../authn/flow.ts';

/** What a mail asked for by this request needs: the settings, and the language of the request's page. */
export function mailDeps(ctx: RouteContext, request: FastifyRequest): MailDeps {
  return { ...ctx.mail, t: translator(localeOf(request)) };
}

/** The sign-in page's links to a password reset and to sign-up, each only when it works. */
export function mailLinksOf(ctx: RouteContext): { forgot: boolean; signup: boolean } {
  const forgot = mailAvailable(ctx.mail);
  return { forgot, signup: forgot && ctx.config.signup.mode === 'open' };
}

export type OpenedInteraction = { interaction: Interaction; clientName: string; client: Client };

/** The authorization request waiting for the user, if it is genuine, unexpired, and was started in this browser. */
export async function openInteraction(
  ctx: RouteContext,
  request: FastifyRequest,
  sealed: string | undefined,
): Promise<OpenedInteraction | undefined> {
  const interaction = sealed ? ctx.sealer.open(sealed, ctx.now()) : undefined;
  if (!interaction || !ctx.browser.isBound(request, interaction.browser)) return undefined;
  useInteractionLocales(request, interaction.request.uiLocales);
  const client = await ctx.store.getClient(interaction.request.clientId);
  return client ? { interaction, clientName: client.name, client } : undefined;
}

/**
 * What a sign-in is for: an authorization request (its sealed interaction, opened), the account page
 * (null), or the admin console (CONSOLE).
 */
export type SignInFor = (OpenedInteraction & { sealed: string }) | null | typeof CONSOLE;

/**
 * What a sign-in page's form was for, by its `interaction` field: the console's (CONSOLE), a request's
 * (its sealed interaction, opened), or the account's (empty); undefined for a request that no longer
 * opens (expired, or from another browser).
 */
export async function postedFor(
  ctx: RouteContext,
  request: FastifyRequest,
  field: string,
): Promise<SignInFor | undefined> {
  if (field === CONSOLE) return CONSOLE;
  if (field === '') return null;
  const opened = await openInteraction(ctx, request, field);
  return opened ? { ...opened, sealed: field } : undefined;
}

/** The authorization request a sign-in is for, if it is for one. */
export const requestOf = (signInFor: SignInFor) => (signInFor === CONSOLE ? null : signInFor);

/** What the admin console needs of a session (TESSERA_ADMIN_MFA, src/authn/policy.ts). */
export const consoleNeed = (ctx: RouteContext) => consoleSignIn(ctx.config.mfa.admin, ctx.config.mfa.mode);

/** What a first step's sign-in goes on with: the request's requirement, its resume and client, or the account's. */
export function purposeOf(ctx: RouteContext, request: FastifyRequest, reply: FastifyReply, signInFor: SignInFor) {
  const bind = () => ctx.browser.binding(request, reply);
  if (signInFor === CONSOLE) return { need: consoleNeed(ctx), resume: CONSOLE, clientId: null, bind };
  return {
    need: signInFor?.interaction.need ?? accountSignIn(ctx.config.mfa.mode),
    resume: signInFor ? signInFor.sealed : null,
    clientId: signInFor?.interaction.request.clientId ?? null,
    bind,
  };
}

/** A sign-in through the provider `providerId` for what the sign-in page was for, with its login_hint. */
export function startUpstreamSignIn(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  providerId: string,
  signInFor: SignInFor,
): Promise<FastifyReply> {
  const { need, resume, clientId } = purposeOf(ctx, request, reply, signInFor);
  const loginHint = requestOf(signInFor)?.interaction.request.loginHint ?? null;
  const start = { providerId, purpose: 'sign-in', resume, clientId, need, userId: null, loginHint } as const;
  return startUpstream(ctx, request, reply, start);
}

/** The sign-in page of `signInFor`, with `query` (e.g. `error=login_failed`). */
export function signInPath(signInFor: SignInFor, query: string): string {
  if (signInFor === CONSOLE) return `/admin/login?${query}`;
  return signInFor ? `/login?interaction=${encodeURIComponent(signInFor.sealed)}&${query}` : `/account/login?${query}`;
}

/**
 * The sign-in page, of a request or of the account, with every other way in: a passkey, the upstream
 * providers, a reset by mail. A refused password (429, Retry-After) keeps them: they are not what is
 * throttled.
 */
export async function sendSignInPage(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { for: SignInFor; error?: Text; note?: Text; username?: string; refusal?: Refusal },
): Promise<FastifyReply> {
  const { for: purpose, refusal, ...said } = input;
  const signInFor = requestOf(purpose);
  // OIDC Core §3.1.2.1 login_hint: the username field filled in with it, unless the person typed one.
  const hint = signInFor?.interaction.request.loginHint;
  if (said.username === undefined && hint !== undefined) said.username = hint;
  const forPage = signInFor
    ? {
        interaction: signInFor.sealed,
        clientName: signInFor.clientName,
        vetting: clientVetting(signInFor.client, signInFor.interaction.request.redirectUri),
      }
    : purpose === CONSOLE
      ? { interaction: CONSOLE, clientName: null, action: '/admin/login', lead: { key: 'admin.login' } as const }
      : { interaction: '', clientName: null, action: '/account/login' };
  const csrfToken = ctx.browser.csrfToken(request, reply);
  const passkeyOptions = await passkeySignInOptions(ctx, request, reply);
  const ways = { passkeyOptions, providers: await providerButtonsOf(ctx), mail: mailLinksOf(ctx) };
  if (refusal) reply.code(429).header('retry-after', String(refusal.retryAfter));
  const error = refusal ? { error: throttledText(refusal) } : {};
  return sendPage(reply, (ui) => loginPage(ui, { ...forPage, csrfToken, ...ways, ...said, ...error }));
}

/**
 * An account page's form (POST): its form token, then the browser's session (else the sign-in page),
 * with who asks and when.
 */
export async function accountForm(ctx: RouteContext, request: FastifyRequest, reply: FastifyReply) {
  if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return { sent: csrfFailedPage(reply) };
  const current = await signedInSession(ctx, request);
  if (!current) return { sent: reply.redirect('/account/login', 303) };
  return { ...current, requester: requesterOf(request), now: ctx.now() };
}

/** A change to how the user signs in, on a sign-in not recent enough (src/authn/recent.ts): sign in again first. */
export function signInAgain(reply: FastifyReply): FastifyReply {
  return reply.redirect('/account/login?reauth=1', 303);
}

/** The browser's session and its user, when the session satisfies `need` (src/authn/sufficiency.ts). */
export async function signedInSession(
  ctx: RouteContext,
  request: FastifyRequest,
  need: Requirement = ANY_SIGN_IN,
): Promise<{ session: BrowserSession; user: User } | undefined> {
  const session = await ctx.browser.session(request, ctx.now());
  const user = await sessionUser(ctx.store, session);
  return session && user && !shortfall(session, user, need) ? { session, user } : undefined;
}

/**
 * A later step of a sign-in for an authorization request keeps the request's language (its
 * ui_locales): the sealed request it resumes says it.
 */
export function keepInteractionLocale(ctx: RouteContext, request: FastifyRequest, resume: string | null): void {
  const interaction = resume ? ctx.sealer.open(resume, ctx.now()) : undefined;
  useInteractionLocales(request, interaction?.request.uiLocales);
}

export function sendExpired(reply: FastifyReply): FastifyReply {
  return sendError(reply, 'error.expired.title', {
    description: 'Go back to the application and start again.',
    says: 'error.expired.says',
  });
}

/** The page of a sign-in's next step. */
function stepLocation(progress: Extract<SignInProgress, { kind: 'next-step' }>): string {
  return `/login/${progress.method}?pending=${encodeURIComponent(progress.pending)}`;
}

/**
 * A step-up of the browser's session for a page of ours (the console, the device page): its sign-in
 * goes on from its factors to `need`, then to `resume`. The next step's page, or undefined when the
 * person has no way to reach that level.
 */
export async function stepUpLocation(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  up: { session: BrowserSession; user: User; need: Requirement; resume: string | null; clientId: string | null },
): Promise<string | undefined> {
  const { session, user, need, resume, clientId } = up;
  const so = { user, factors: session.factors, authTime: session.authTime, need, resume, clientId };
  const progress = await advance(
    { store: ctx.store, pending: ctx.pending },
    { ...so, bind: () => ctx.browser.binding(request, reply), now: ctx.now() },
  );
  return progress.kind === 'next-step' ? stepLocation(progress) : undefined;
}

/**
 * What a complete sign-in for a page of ours is offered as (a password reset's, after its second
 * factor): that page finishes it (./routes/reset.ts), and until it does the sign-in is no session.
 */
export const HELD_FOR_PAGE = 'held-for-page';

/**
 * After a step (POST): the next step's page, or the session, then what the sign-in was for: the
 * authorization request, whose login has now happened (prompt=login included), or the account page.
 * A sign-in for a page of ours (a password reset's) goes back to it sealed, not as a session: no
 * client can take a reset's sign-in before its new password is chosen.
 */
export async function finishSignIn(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  progress: SignInProgress,
): Promise<FastifyReply> {
  if (progress.kind === 'next-step') {
    return reply.code(303).header('cache-control', 'no-store').redirect(stepLocation(progress), 303);
  }
  const now = ctx.now();
  const { resume } = progress;
  if (resume?.startsWith('/')) {
    const { signedIn, user, clientId } = progress;
    const so = { ...signedIn, user, need: ANY_SIGN_IN, resume, clientId, now };
    const held = holdSignIn(ctx, { ...so, bind: () => ctx.browser.binding(request, reply) }, [HELD_FOR_PAGE]);
    const location = `${resume}${resume.includes('?') ? '&' : '?'}pending=${encodeURIComponent(held)}`;
    return reply.code(303).header('cache-control', 'no-store').redirect(location, 303);
  }
  const session = await beginSession(ctx, request, reply, progress);
  if (!session) return sendLinkRefused(ctx, reply, progress);
  if (resume === null) return reply.redirect(ctx.browser.afterAccountSignIn(request, reply), 303);
  if (resume === CONSOLE) return reply.redirect('/admin', 303);
  const opened = await openInteraction(ctx, request, resume);
  if (!opened) return sendExpired(reply);
  const { interaction } = opened;
  const resumed = { ...interaction, need: { ...interaction.need, forceLogin: false } };
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, pending: ctx.pending, codes: ctx.codes };
  return sendOutcome(reply, await continueAuthorization(deps, opened.client, resumed, session, now), 303);
}

/**
 * A complete sign-in becomes this browser's session (the device remembered for its user); one that
 * links an upstream account writes the link with its session, or neither: undefined when the link was
 * refused (the provider's account got linked meanwhile), and nothing changed.
 */
export async function beginSession(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  complete: { signedIn: SignedIn; user: User; clientId: string | null; link?: LinkOnSignIn | undefined },
): Promise<BrowserSession | undefined> {
  const write = complete.link && sessionWithLink(ctx, request, complete.link);
  const { signedIn, clientId } = complete;
  const started = await ctx.browser.startSession(request, reply, signedIn, ctx.now(), clientId, write);
  if (!started) return undefined;
  ctx.browser.rememberDevice(request, reply, complete.user.username);
  return { ...started, user: complete.user };
}
