// Who may use the admin console (/admin): a person signed in, with the admin role, whose session meets
// TESSERA_ADMIN_MFA (src/authn/policy.ts consoleSignIn). Someone not signed in goes to the console's
// sign-in page (and back to the console after); an admin whose session is short of the second factor
// steps up from it, as an authorization request asking for two factors does; a person without the
// role gets 403. Each form is checked as the account page's are: the session-bound form token here,
// the Origin by the route's `sameOrigin` (./plugins/same-origin.ts). What an admin changes is recorded
// with `actor: user:<their id>`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE } from '../authn/flow.ts';
import { RECENT_SIGN_IN } from '../authn/recent.ts';
import { type BrowserSession, sessionUser } from '../authn/session.ts';
import { shortfall } from '../authn/sufficiency.ts';
import type { Requester } from '../events/index.ts';
import { ADMIN_ROLE, type User } from '../store/users.ts';
import type { RouteContext } from './context.ts';
import { formValue } from './forms.ts';
import { csrfFailedPage, sendError } from './outcome.ts';
import { requesterOf } from './requester.ts';
import { consoleNeed, stepUpLocation } from './sign-in.ts';

/** An admin at the console: their session and user, who they are to the trail, and the time. */
export interface ConsoleAdmin {
  session: BrowserSession;
  admin: User;
  requester: Requester;
  now: number;
}

const FORBIDDEN = {
  error: 'access_denied',
  description: 'The admin console is for people with the admin role.',
  says: 'admin.forbidden.says',
} as const;

/** The admin of this request, or the answer already sent (the sign-in page, a step-up, 403). */
export async function consoleAdmin(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ConsoleAdmin | { sent: FastifyReply }> {
  const now = ctx.now();
  const status = request.method === 'GET' ? 302 : 303;
  const session = await ctx.browser.session(request, now);
  const user = await sessionUser(ctx.store, session);
  const need = consoleNeed(ctx);
  const lacking = shortfall(session, user, need);
  if (!session || !user || (lacking !== undefined && lacking !== 'level')) {
    return { sent: reply.header('cache-control', 'no-store').redirect('/admin/login', status) };
  }
  if (!user.roles.includes(ADMIN_ROLE)) return { sent: sendError(reply, 'admin.forbidden.title', FORBIDDEN, 403) };
  if (lacking === 'level') {
    // A step-up: the session's sign-in goes on from its factors, to the console after.
    const up = { session, user, need, resume: CONSOLE, clientId: null };
    const location = await stepUpLocation(ctx, request, reply, up);
    if (location === undefined) {
      const unmet = {
        ...FORBIDDEN,
        description: 'The admin console needs a second factor.',
        says: 'admin.mfa.says' as const,
      };
      return { sent: sendError(reply, 'admin.forbidden.title', unmet, 403) };
    }
    return { sent: reply.header('cache-control', 'no-store').redirect(location, status) };
  }
  const requester = { ...requesterOf(request), actor: `user:${user.id}` };
  return { session, admin: user, requester, now };
}

/** A console form (POST): its form token first (as the account page's), then the admin. */
export async function consoleForm(
  ctx: RouteContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ConsoleAdmin | { sent: FastifyReply }> {
  if (!ctx.browser.checkCsrf(request, formValue(request, 'csrf'))) return { sent: csrfFailedPage(reply) };
  return consoleAdmin(ctx, request, reply);
}

/**
 * A dangerous action (deleting a client) on a sign-in not recent enough (src/authn/recent.ts): the
 * answer that sends the admin to sign in again first, else undefined.
 */
export function needsRecentSignIn(ctx: RouteContext, current: ConsoleAdmin, reply: FastifyReply) {
  const fresh = { ...consoleNeed(ctx), freshSince: current.now - RECENT_SIGN_IN };
  if (!shortfall(current.session, current.admin, fresh)) return undefined;
  return reply.header('cache-control', 'no-store').redirect('/admin/login?reauth=1', 303);
}
