// The admin console's event log (src/ui/admin/events.ts): filtered by type, user (a username) and
// client, newest first, a page at a time (src/admin/events.ts).
import type { FastifyInstance } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { listEventsPage } from '../../admin/events.ts';
import { eventsPage } from '../../ui/admin/events.ts';
import { consoleAdmin } from '../admin-console.ts';
import type { RouteContext } from '../context.ts';
import { queryValue } from '../forms.ts';
import { sendPage } from '../pages.ts';
import { badQuery } from './admin-users.ts';

const PAGE = 50;

export function adminEventRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/admin/events', { config: { html: true } }, async (request, reply) => {
    const current = await consoleAdmin(ctx, request, reply);
    if ('sent' in current) return current.sent;
    const value = (name: string) => queryValue(request, name)?.trim() ?? '';
    const filter = { type: value('type'), user: value('user'), client: value('client') };
    const named = filter.user === '' ? undefined : await ctx.store.getUserByUsername(filter.user);
    const unknownUser = filter.user !== '' && !named ? filter.user : undefined;
    const cursor = queryValue(request, 'cursor');
    let page;
    try {
      page = unknownUser
        ? { events: [], nextCursor: null }
        : await listEventsPage(ctx.store, {
            ...(filter.type ? { type: filter.type } : {}),
            ...(named ? { userId: named.id } : {}),
            ...(filter.client ? { clientId: filter.client } : {}),
            limit: PAGE,
            ...(cursor ? { cursor } : {}),
          });
    } catch (err) {
      if (err instanceof AdminError) return badQuery(reply, err);
      throw err;
    }
    // The users the page names, by id (the events' user and the admins who acted), for reading.
    const ids = new Set(page.events.flatMap((e) => [e.userId, e.actor?.startsWith('user:') ? e.actor.slice(5) : null]));
    const usernames = new Map<string, string>();
    for (const id of ids) {
      const user = id === null ? undefined : await ctx.store.getUserById(id);
      if (user) usernames.set(user.id, user.username);
    }
    const input = { admin: current.admin.username, filter, ...page, usernames, unknownUser };
    return sendPage(reply.header('cache-control', 'no-store'), (ui) => eventsPage(ui, input));
  });
}
