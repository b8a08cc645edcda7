// The transactional outbox: a change's event (the audit trail, ./events.ts) and that event's webhook
// deliveries (./webhooks.ts) are built here as inserts that run in the same write as the change, so
// that the change, its event and its deliveries are committed together or not at all.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { webhookAudience } from '../events/webhooks/audience.ts';
import type { Database, EventRow } from './tables.ts';

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
    locale: event.locale,
  };
}

/**
 * The insert of `events`, to run in the same write as the changes they record, and of their webhook
 * deliveries (below): an event and its deliveries are committed together or not at all.
 */
export function insertEvents(db: Kysely<Database>, events: Array<SecurityEvent | undefined>) {
  const present = events.filter((event) => event !== undefined);
  if (present.length === 0) return [];
  return [db.insertInto('events').values(present.map(fromEvent)), ...present.map((e) => enqueueDeliveries(db, e))];
}

/**
 * The insert of `event` only if a row exists when it runs, the signing key `kid`, the webhook `id` or
 * the user's passkey `id` (`exists`): the event of an insert that may do nothing (ON CONFLICT DO
 * NOTHING, a limit, a row of someone else's) is written with it or not at all.
 */
export function insertEventsIf(
  db: Kysely<Database>,
  event: SecurityEvent | undefined,
  exists: { signingKey: string } | { webhook: string } | { passkey: string; userId: string },
) {
  if (!event) return [];
  const condition =
    'signingKey' in exists
      ? db.selectFrom('signing_keys').select('kid').where('kid', '=', exists.signingKey)
      : 'webhook' in exists
        ? db.selectFrom('webhooks').select('id').where('id', '=', exists.webhook)
        : db.selectFrom('passkeys').select('id').where('id', '=', exists.passkey).where('user_id', '=', exists.userId);
  return insertEventsWhen(db, event, condition);
}

/** The insert of `event` (with its deliveries) only if `condition` finds a row when it runs. */
export function insertEventsWhen(
  db: Kysely<Database>,
  event: SecurityEvent,
  condition: SelectQueryBuilder<Database, keyof Database, unknown>,
) {
  const row = fromEvent(event);
  const values = db
    .selectNoFrom((eb) => [
      eb.val(row.id).as('id'),
      eb.val(row.at).as('at'),
      eb.val(row.type).as('type'),
      eb.val(row.user_id).as('user_id'),
      eb.val(row.client_id).as('client_id'),
      eb.val(row.ip).as('ip'),
      eb.val(row.user_agent).as('user_agent'),
      eb.val(row.data).as('data'),
      eb.val(row.locale).as('locale'),
    ])
    .where((eb) => eb.exists(condition));
  const columns = ['id', 'at', 'type', 'user_id', 'client_id', 'ip', 'user_agent', 'data', 'locale'] as const;
  return [db.insertInto('events').columns(columns).expression(values), enqueueDeliveries(db, event)];
}

/**
 * One delivery per webhook that wants the event: subscribed to its type, and in its audience
 * (../events/webhooks/audience.ts: the operator's, the user's whom the event is about, or the owner's
 * of the app it is about when the type is one an app's owner hears of). Only if the event itself was
 * written (an event may be written conditionally, insertEventsIf).
 */
export function enqueueDeliveries(db: Kysely<Database>, event: SecurityEvent) {
  const audience = webhookAudience(event);
  const user = audience.user === null ? null : sql<string>`cast(${audience.user} as text)`;
  const rows = db
    .selectFrom('webhooks as w')
    .select([
      sql<string>`cast(${event.id} as text) || '.' || w.id`.as('id'),
      'w.id as webhook_id',
      sql<string>`cast(${event.id} as text)`.as('event_id'),
      sql<string>`cast(${event.type} as text)`.as('event_type'),
      sql<string>`case when w.owner_id is null or w.owner_id = ${user}
        then cast(${audience.whole} as text) else cast(${audience.forAppOwner} as text) end`.as('payload'),
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
        ...(user === null ? [] : [eb('w.owner_id', '=', user)]),
        ...(audience.appOf === null
          ? []
          : [
              eb.exists(
                eb
                  .selectFrom('clients as c')
                  .select('c.client_id')
                  .where('c.client_id', '=', sql<string>`cast(${audience.appOf} as text)`)
                  .whereRef('c.owner_id', '=', 'w.owner_id'),
              ),
            ]),
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
