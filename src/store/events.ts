// The audit trail's table (src/events): an event's row, the insert that goes into the same write as
// the change it records, and the reads of `tessera events list` and the account page.
import type { Kysely } from 'kysely';
import type { EventData, EventType, SecurityEvent } from '../events/index.ts';
import type { Database, EventRow } from './types.ts';
import { enqueueDeliveries } from './webhooks.ts';

export interface EventFilter {
  userId?: string;
  clientId?: string;
  type?: EventType;
  /** Epoch seconds: events at or after. */
  since?: number;
  /** At most this many, newest first (default 100). */
  limit?: number;
}

export function fromEvent(event: SecurityEvent): EventRow {
  return {
    id: event.id,
    at: event.at,
    type: event.type,
    user_id: event.userId,
    client_id: event.clientId,
    ip: event.ip,
    user_agent: event.userAgent,
    data: event.data && JSON.stringify(event.data),
  };
}

export function toEvent(row: EventRow): SecurityEvent {
  return {
    id: row.id,
    at: Number(row.at),
    type: row.type as EventType,
    userId: row.user_id,
    clientId: row.client_id,
    ip: row.ip,
    userAgent: row.user_agent,
    data: row.data === null ? null : (JSON.parse(row.data) as EventData),
  };
}

/**
 * The insert of `events`, to run in the same write as the changes they record, and of their webhook
 * deliveries (the outbox, ./webhooks.ts): an event and its deliveries are committed together or not at all.
 */
export function insertEvents(db: Kysely<Database>, events: Array<SecurityEvent | undefined>) {
  const present = events.filter((event) => event !== undefined);
  if (present.length === 0) return [];
  return [db.insertInto('events').values(present.map(fromEvent)), ...present.map((e) => enqueueDeliveries(db, e))];
}

/**
 * The insert of `event` only if the signing key `kid` exists when it runs: the event of an insert
 * that may do nothing (ON CONFLICT DO NOTHING) is written with it or not at all.
 */
export function insertEventsIf(db: Kysely<Database>, event: SecurityEvent | undefined, kid: string) {
  if (!event) return [];
  const row = fromEvent(event);
  const values = db
    .selectFrom('signing_keys')
    .select((eb) => [
      eb.val(row.id).as('id'),
      eb.val(row.at).as('at'),
      eb.val(row.type).as('type'),
      eb.val(row.user_id).as('user_id'),
      eb.val(row.client_id).as('client_id'),
      eb.val(row.ip).as('ip'),
      eb.val(row.user_agent).as('user_agent'),
      eb.val(row.data).as('data'),
    ])
    .where('kid', '=', kid);
  const columns = ['id', 'at', 'type', 'user_id', 'client_id', 'ip', 'user_agent', 'data'] as const;
  return [db.insertInto('events').columns(columns).expression(values), enqueueDeliveries(db, event)];
}

export async function listEvents(db: Kysely<Database>, filter: EventFilter): Promise<SecurityEvent[]> {
  let query = db.selectFrom('events').selectAll();
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
  const rows = await query
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit ?? 100)
    .execute();
  return rows.map(toEvent);
}
