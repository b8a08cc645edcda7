// The audit trail (src/events): what the store answers about it, and its table's reads (`tessera
// events list`, the account page). A change's event is written with the change itself (./outbox.ts).
import type { EventData, EventType, SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import type { EventRow } from './tables.ts';

export interface EventFilter {
  userId?: string;
  clientId?: string;
  type?: EventType;
  /** The events of one request (its log lines' `reqId`). */
  requestId?: string;
  /** Epoch seconds: events at or after. */
  since?: number;
  /** Only the events older than this one (its time and id): the next page after it. */
  before?: { at: number; id: string };
  /** At most this many, newest first (default 100). */
  limit?: number;
}

/**
 * The audit trail (src/events). The stores' write methods take the event that records their change,
 * written in the same transaction; this records the events that change nothing else.
 */
export interface EventStore {
  recordEvent(event: SecurityEvent): Promise<void>;
  /** Newest first. */
  listEvents(filter: EventFilter): Promise<SecurityEvent[]>;
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
    locale: row.locale,
    requestId: row.request_id ?? null,
    actor: row.actor ?? null,
  };
}

/** The audit trail: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withEvents<Base extends AggregateClass>(Base: Base) {
  abstract class Events extends Base implements EventStore {
    /** An event that records no change of its own (a failed sign-in, a throttled one). */
    async recordEvent(event: SecurityEvent): Promise<void> {
      await this.write(...this.events(event));
    }

    async listEvents(filter: EventFilter): Promise<SecurityEvent[]> {
      let query = this.db.selectFrom('events').selectAll();
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
      if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId);
      if (filter.type !== undefined) query = query.where('type', '=', filter.type);
      if (filter.requestId !== undefined) query = query.where('request_id', '=', filter.requestId);
      if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
      const before = filter.before;
      if (before !== undefined)
        query = query.where((eb) =>
          eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]),
        );
      const rows = await query
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(filter.limit ?? 100)
        .execute();
      return rows.map(toEvent);
    }
  }
  return Events;
}
