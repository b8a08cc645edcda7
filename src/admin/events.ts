// The event log as an operator reads it, a page at a time, newest first: what the console's event
// log shows (and an admin API would page alike). Filters by type, user and client.
import type { EventType, SecurityEvent } from '../events/index.ts';
import { EVENT_TYPES } from '../events/index.ts';
import type { EventFilter, EventStore } from '../store/events.ts';
import { AdminError } from './errors.ts';

export interface EventsQuery {
  type?: string | undefined;
  userId?: string | undefined;
  clientId?: string | undefined;
  /** At most this many (1 to 1000; 50 by default). */
  limit?: number | undefined;
  /** The cursor a previous page gave. */
  cursor?: string | undefined;
}

/** A page of events, and the cursor of the next when there may be more. */
export interface EventsPage {
  events: SecurityEvent[];
  nextCursor: string | null;
}

/** The cursor after `event`: its time and id, opaque to whoever pages. */
const cursorAfter = (event: Pick<SecurityEvent, 'at' | 'id'>) =>
  Buffer.from(`${event.at}.${event.id}`, 'utf8').toString('base64url');

function openCursor(cursor: string): { at: number; id: string } {
  const match = /^(\d{1,15})\.([0-9A-Za-z_-]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const before = match ? { at: Number(match[1]), id: match[2]! } : undefined;
  if (!before || cursorAfter(before) !== cursor) throw new AdminError('cursor: not a cursor a page of events gave');
  return before;
}

/** The events matching `query`, newest first, from its cursor on. */
export async function listEventsPage(store: Pick<EventStore, 'listEvents'>, query: EventsQuery): Promise<EventsPage> {
  const { limit = 50 } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new AdminError('limit: a whole number from 1 to 1000');
  if (query.type !== undefined && !EVENT_TYPES.includes(query.type as EventType))
    throw new AdminError(`type: "${query.type}" is not an event type`);
  const filter: EventFilter = {
    ...(query.type !== undefined ? { type: query.type as EventType } : {}),
    ...(query.userId !== undefined ? { userId: query.userId } : {}),
    ...(query.clientId !== undefined ? { clientId: query.clientId } : {}),
    ...(query.cursor !== undefined ? { before: openCursor(query.cursor) } : {}),
    limit: limit + 1,
  };
  const found = await store.listEvents(filter);
  if (found.length <= limit) return { events: found, nextCursor: null };
  const events = found.slice(0, limit);
  return { events, nextCursor: cursorAfter(events.at(-1)!) };
}
