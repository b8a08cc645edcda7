// The audit trail as the operator reads it (`tessera events list`, GET /admin/api/v1/events): newest
// first, filtered by user, client, type, request and time, a page at a time.
import { EVENT_TYPES, type EventType, type SecurityEvent } from '../events/index.ts';
import type { EventStore } from '../store/events.ts';
import type { UserStore } from '../store/users.ts';
import { AdminError, NotFoundError } from './errors.ts';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `since`: an ISO 8601 date or time (`2026-11-01`, `2026-11-01T12:00:00Z`), or a span back (`24h`, `7d`). */
export function parseSince(value: string, now: number): number {
  const span = /^(\d+)([smhd])$/.exec(value);
  if (span) return now - Number(span[1]) * UNITS[span[2]!]!;
  const time = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time)) throw new AdminError(`since: "${value}" is neither a date (2026-11-01) nor a span (24h, 7d)`);
  return Math.floor(time / 1000);
}

/** An event as `--json` and the API show it. */
export function describeEvent(e: SecurityEvent) {
  return {
    id: e.id,
    at: new Date(e.at * 1000).toISOString(),
    type: e.type,
    user_id: e.userId,
    client_id: e.clientId,
    ip: e.ip,
    user_agent: e.userAgent,
    request_id: e.requestId,
    actor: e.actor,
    data: e.data,
  };
}

export interface EventQuery {
  /** A username or a user's id. */
  user?: string | undefined;
  client?: string | undefined;
  type?: string | undefined;
  request?: string | undefined;
  since?: string | undefined;
  limit: number;
  /** The next_cursor of the previous page. */
  cursor?: string | undefined;
}

const cursorOf = (e: SecurityEvent) => Buffer.from(`${e.at}:${e.id}`, 'utf8').toString('base64url');

function openCursor(cursor: string): { at: number; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (!/^\d+$/.test(at ?? '') || !id || cursorOf({ at: Number(at), id } as SecurityEvent) !== cursor)
    throw new AdminError('cursor: not the cursor of a page of events');
  return { at: Number(at), id };
}

/** A page of events, newest first, and the cursor of the next page (null on the last). */
export async function listEventPage(
  store: Pick<EventStore, 'listEvents'> & Pick<UserStore, 'getUserByUsername' | 'getUserById'>,
  query: EventQuery,
  now: number,
): Promise<{ events: SecurityEvent[]; nextCursor: string | null }> {
  if (query.type !== undefined && !EVENT_TYPES.includes(query.type as EventType))
    throw new AdminError(`type: "${query.type}" is not an event type; the types are: ${EVENT_TYPES.join(', ')}`);
  let userId: string | undefined;
  if (query.user !== undefined) {
    const user = (await store.getUserByUsername(query.user)) ?? (await store.getUserById(query.user));
    if (!user) throw new NotFoundError(`no user ${query.user}`);
    userId = user.id;
  }
  const found = await store.listEvents({
    ...(userId !== undefined ? { userId } : {}),
    ...(query.client !== undefined ? { clientId: query.client } : {}),
    ...(query.type !== undefined ? { type: query.type as EventType } : {}),
    ...(query.request !== undefined ? { requestId: query.request } : {}),
    ...(query.since !== undefined ? { since: parseSince(query.since, now) } : {}),
    ...(query.cursor !== undefined ? { before: openCursor(query.cursor) } : {}),
    limit: query.limit + 1,
  });
  const events = found.slice(0, query.limit);
  return { events, nextCursor: found.length > query.limit ? cursorOf(events.at(-1)!) : null };
}
