// The webhooks' tables (src/events/webhooks): the fan-out of an event into the outbox, written in
// the same transaction as the event, and the statements of the delivery worker and the CLI.
import { type Kysely, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { webhookPayload } from '../events/webhooks/payload.ts';
import type { Database } from './types.ts';

/**
 * One delivery per webhook that wants the event: subscribed to its type, and the operator's, or the
 * user's whom the event is about, or the owner's of the client it is about. Only if the event itself
 * was written (an event may be written conditionally, ./events.ts insertEventsIf).
 */
export function enqueueDeliveries(db: Kysely<Database>, event: SecurityEvent) {
  const full = webhookPayload(event, true);
  const redacted = webhookPayload(event, false);
  const rows = db
    .selectFrom('webhooks as w')
    .select([
      sql<string>`cast(${event.id} as text) || '.' || w.id`.as('id'),
      'w.id as webhook_id',
      sql<string>`cast(${event.id} as text)`.as('event_id'),
      sql<string>`cast(${event.type} as text)`.as('event_type'),
      sql<string>`case when w.owner_id is null or w.owner_id = cast(${event.userId} as text)
        then cast(${full} as text) else cast(${redacted} as text) end`.as('payload'),
      sql<string>`'pending'`.as('status'),
      sql<number>`0`.as('attempts'),
      sql<number>`cast(${event.at} as bigint)`.as('next_attempt_at'),
      sql<number>`cast(${event.at} as bigint)`.as('created_at'),
    ])
    // The type as a whole word of the space-separated list; `_` is a LIKE wildcard, so escaped.
    .where(sql<boolean>`' ' || w.events || ' ' like ${`% ${event.type.replace(/[\\%_]/g, '\\$&')} %`} escape '\\'`)
    .where((eb) =>
      eb.or([
        eb('w.owner_id', 'is', null),
        eb('w.owner_id', '=', sql<string>`cast(${event.userId} as text)`),
        eb.exists(
          eb
            .selectFrom('clients as c')
            .select('c.client_id')
            .where('c.client_id', '=', sql<string>`cast(${event.clientId} as text)`)
            .whereRef('c.owner_id', '=', 'w.owner_id'),
        ),
      ]),
    )
    .where((eb) => eb.exists(eb.selectFrom('events as e').select('e.id').where('e.id', '=', event.id)));
  const columns = [
    'id',
    'webhook_id',
    'event_id',
    'event_type',
    'payload',
    'status',
    'attempts',
    'next_attempt_at',
    'created_at',
  ] as const;
  return db.insertInto('webhook_deliveries').columns(columns).expression(rows);
}
