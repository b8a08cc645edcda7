// What every sign-in page shares (src/authn): the authorization request a sign-in is for, and the
// end of each step: the next step's page, or a session and then the request it was for (or the
// account page). A step's routes read their form, call their step's domain function, and hand its
// progress to `finishSignIn`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ANY_SIGN_IN, type Requirement } from '../authn/policy.ts';
import { type BrowserSession, type SignedIn, sessionUser } from '../authn/session.ts';
import { holdSignIn, type SignInProgress } from '../authn/sign-in.ts';
import { shortfall } from '../authn/sufficiency.ts';
import { continueAuthorization } from '../oauth/authorize/index.ts';
import type { Interaction } from '../oauth/interaction.ts';
import type { Client } from '../store/clients.ts';
import type { User } from '../store/users.ts';
import type { RouteContext } from './context.ts';
import { mailAvailable, type MailDeps } from '../mail/compose.ts';
import { translator } from '../i18n/index.ts';
import { localeOf } from './pages.ts';
import { sendError, sendOutcome } from './outcome.ts';
import { useInteractionLocales } from './pages.ts';

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
    const location = `/login/${progress.method}?pending=${encodeURIComponent(progress.pending)}`;
    return reply.code(303).header('cache-control', 'no-store').redirect(location, 303);
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
  if (resume === null) return reply.redirect('/account', 303);
  const opened = await openInteraction(ctx, request, resume);
  if (!opened) return sendExpired(reply);
  const { interaction } = opened;
  const resumed = { ...interaction, need: { ...interaction.need, forceLogin: false } };
  const deps = { config: ctx.config, store: ctx.store, sealer: ctx.sealer, pending: ctx.pending, codes: ctx.codes };
  return sendOutcome(reply, await continueAuthorization(deps, opened.client, resumed, session, now), 303);
}

/** A complete sign-in becomes this browser's session (the device remembered for its user). */
export async function beginSession(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
  complete: { signedIn: SignedIn; user: User; clientId: string | null },
): Promise<BrowserSession> {
  ctx.browser.rememberDevice(request, reply, complete.user.username);
  const started = await ctx.browser.startSession(request, reply, complete.signedIn, ctx.now(), complete.clientId);
  return { ...started, user: complete.user };
}
