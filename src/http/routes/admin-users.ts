// The admin console's users (src/ui/admin/users.ts): the search, a user's page, and the support
// person's actions, each a POST form calling one operation of src/admin/support.ts with the admin
// as its actor, then back to the user's page saying what was done (303).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { lockInForce, signInLocks } from '../../admin/sign-in-locks.ts';
import {
  disableUser,
  enableUser,
  resetSecondFactors,
  signOutEverywhere,
  unlockUser,
  type SupportOptions,
} from '../../admin/support.ts';
import { AdminError } from '../../admin/errors.ts';
import { listUsers } from '../../admin/users.ts';
import { changeUserRoles } from '../../admin/roles.ts';
import { enrolledMethods } from '../../authn/registry.ts';
import type { MessageKey } from '../../i18n/index.ts';
import type { Store } from '../../store/store.ts';
import { ADMIN_ROLE, type User } from '../../store/users.ts';
import { DONE, type UserDetail, userPage, usersPage } from '../../ui/admin/users.ts';
import { type ConsoleAdmin, consoleAdmin, consoleForm } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { formValue, queryValue } from '../forms.ts';
import { sendError } from '../outcome.ts';
import { sendPage } from '../pages.ts';

/** How many users a page of the search shows, and how many sign-ins a user's page. */
const PAGE = 25;
const SIGN_INS = 10;

/** What a user's page shows besides the user. */
async function userDetail(store: Store, ctx: RouteContext, user: User, now: number): Promise<UserDetail> {
  const lock = lockInForce(await signInLocks(store, ctx.config.throttle, user, now));
  const [ok, failed] = await Promise.all(
    (['user.signed_in', 'user.sign_in_failed'] as const).map((type) =>
      store.listEvents({ userId: user.id, type, limit: SIGN_INS }),
    ),
  );
  const signIns = [...ok!, ...failed!]
    .sort((a, b) => b.at - a.at)
    .slice(0, SIGN_INS)
    .map((e) => ({ at: e.at, ok: e.type === 'user.signed_in', ip: e.ip, userAgent: e.userAgent }));
  const grants = (await store.listActiveGrants(user.id, now)).map((g) => ({
    clientName: g.clientName ?? g.clientId,
    scope: g.scope,
    createdAt: g.createdAt,
  }));
  const sessions = (await store.listSessionsOf(user.id, now)).map((s) => ({
    createdAt: s.createdAt,
    expiresAt: s.expiresAt,
    factors: s.factors.map((f) => f.method),
  }));
  return { user, lock, signIns, factors: [...(await enrolledMethods(store, user))], grants, sessions };
}

/** What the console does to a user, by the last part of its form's path, and what the page then says. */
const ACTIONS: Record<string, (store: Store, user: User, options: SupportOptions) => Promise<string>> = {
  unlock: async (store, user, options) =>
    (await unlockUser(store, user, options)).unlocked ? 'unlocked' : 'not-locked',
  disable: async (store, user, options) => (await disableUser(store, user, options), 'disabled'),
  enable: async (store, user, options) => (await enableUser(store, user, options), 'enabled'),
  'reset-mfa': async (store, user, options) => (await resetSecondFactors(store, user, options), 'mfa-reset'),
  'sign-out': async (store, user, options) => (await signOutEverywhere(store, user, options), 'signed-out'),
};

export function adminUserRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const html = { config: { html: true } };
  const posted = { config: { html: true, sameOrigin: true } };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  /** A user's page: what it shows of them, with what was done (`done`) or the roles refused (400). */
  const sendUserPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    current: ConsoleAdmin,
    user: User,
    said: { done?: MessageKey | undefined; roles?: { posted: string; problem: string } },
  ) => {
    const detail = await userDetail(ctx.store, ctx, user, current.now);
    const csrfToken = ctx.browser.csrfToken(request, reply);
    const input = { ...detail, admin: current.admin.username, csrfToken, ...said };
    const code = said.roles ? 400 : 200;
    return sendPage(reply.code(code).header('cache-control', 'no-store'), (ui) => userPage(ui, input));
  };

  app.get('/admin', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    return reply.redirect('/admin/users', 302);
  });

  app.get('/admin/users', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const search = queryValue(request, 'q')?.trim() ?? '';
    const cursor = queryValue(request, 'cursor');
    let page;
    try {
      page = await listUsers(ctx.store, { search, limit: PAGE, ...(cursor ? { cursor } : {}) });
    } catch (err) {
      if (err instanceof AdminError) return badQuery(reply, err);
      throw err;
    }
    const input = { admin: current.admin.username, search, users: page.users, nextCursor: page.nextCursor };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => usersPage(ui, input));
  });

  app.get('/admin/users/:id', html, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const user = await ctx.store.getUserById(idOf(request));
    if (!user) return reply.callNotFound();
    return sendUserPage(request, reply, current, user, { done: DONE[queryValue(request, 'done') ?? ''] });
  });

  app.post('/admin/users/:id/roles', posted, async (request, reply) => {
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const user = await ctx.store.getUserById(idOf(request));
    if (!user) return reply.callNotFound();
    const posted = formValue(request, 'roles') ?? '';
    const roles = [...new Set(posted.split(/\s+/).filter(Boolean))];
    const add = roles.filter((role) => !user.roles.includes(role));
    const remove = user.roles.filter((role) => !roles.includes(role));
    try {
      // Taking the admin role from oneself here would shut the door behind: the command line can.
      if (user.id === current.admin.id && remove.includes(ADMIN_ROLE))
        throw new AdminError('the admin role cannot be taken from yourself here (tessera users update --no-admin can)');
      await changeUserRoles(
        ctx.store,
        user.username,
        { add, remove },
        { now: current.now, requester: current.requester },
      );
    } catch (err) {
      if (!(err instanceof AdminError)) throw err;
      return sendUserPage(request, reply, current, user, { roles: { posted, problem: err.message } });
    }
    return reply.redirect(`/admin/users/${encodeURIComponent(user.id)}?done=roles`, 303);
  });

  app.post('/admin/users/:id/:action', posted, async (request, reply) => {
    const action = ACTIONS[(request.params as { action: string }).action];
    if (!action) return reply.callNotFound();
    const current = await consoleForm(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const user = await ctx.store.getUserById(idOf(request));
    if (!user) return reply.callNotFound();
    const done = await action(ctx.store, user, { now: current.now, requester: current.requester });
    request.log.info(
      { event: 'admin_action', action: done, userId: user.id, actor: current.requester.actor },
      'admin action',
    );
    return reply.redirect(`/admin/users/${encodeURIComponent(user.id)}?done=${done}`, 303);
  });
}

/** A query the console cannot answer (a cursor it did not give): 400, saying why. */
export function badQuery(reply: FastifyReply, err: AdminError): FastifyReply {
  return sendError(reply, 'error.generic.title', { description: err.message }, 400);
}
