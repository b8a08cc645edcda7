// The admin console's event log (src/ui/admin/events.ts): filtered by type, user (a username) and
// client, newest first, a page at a time (src/admin/events.ts, as the admin API's and the CLI's).
import type { FastifyInstance } from 'fastify';
import { AdminError, NotFoundError } from '../../admin/errors.ts';
import { listEventPage } from '../../admin/events.ts';
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
    const cursor = queryValue(request, 'cursor');
    const query = {
      ...(filter.type ? { type: filter.type } : {}),
      ...(filter.user ? { user: filter.user } : {}),
      ...(filter.client ? { client: filter.client } : {}),
      limit: PAGE,
      ...(cursor ? { cursor } : {}),
    };
    let page: Awaited<ReturnType<typeof listEventPage>> = { events: [], nextCursor: null };
    let unknownUser: string | undefined;
    try {
      page = await listEventPage(ctx.store, query, current.now);
    } catch (err) {
      // A user nobody is: said on the page, with the filter to correct.
      if (err instanceof NotFoundError) unknownUser = filter.user;
      else if (err instanceof AdminError) return badQuery(reply, err);
      else throw err;
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
