// The transactional outboxes. A change's event (the audit trail, ./events.ts) and that event's webhook
// deliveries (./webhooks.ts) are built here as inserts that run in the same write as the change, so
// that the change, its event and its deliveries are committed together or not at all. And what the
// two outboxes (webhook_deliveries, ./webhooks.ts; mails, ./mails.ts) share, written once: the
// fields of an entry's retry schedule and lease, a claim, and what an attempt makes of its row
// (src/events/outbox.ts runs them).
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { OutboxOutcome } from '../events/outbox.ts';
import { webhookAudience } from '../events/webhooks/audience.ts';
import { rowValues } from './row-values.ts';
import type { Database, EventRow } from './tables.ts';

/** An outbox's table: each row one thing to send, with its retry schedule and lease. */
export type OutboxTable = 'webhook_deliveries' | 'mails' | 'logout_deliveries';

/** What every outbox entry has besides what it carries: where it stands in its retry schedule. */
export interface OutboxEntry<Done extends string> {
  status: 'pending' | Done | 'failed';
  /** Attempts made, ever: the number of the last one. */
  attempts: number;
  /** The attempts made before the last redelivery: the retry schedule counts from here. */
  retryBase: number;
  nextAttemptAt: number;
  /** While an instance is attempting it: no other takes it until then. */
  lockedUntil: number | null;
  createdAt: number;
  lastError: string | null;
  finishedAt: number | null;
}

/** A new entry's schedule: due at once, not attempted yet. */
export function newOutboxEntry(now: number): OutboxEntry<never> {
  return {
    status: 'pending',
    attempts: 0,
    retryBase: 0,
    nextAttemptAt: now,
    lockedUntil: null,
    createdAt: now,
    lastError: null,
    finishedAt: null,
  };
}

/**
 * The ids of `table`'s entries due at `now` and not leased, as a subquery to narrow (order, limit,
 * more conditions). With `skipLocked` (PostgreSQL) it locks what it selects and passes over what
 * another instance's claim is locking, so that each entry is claimed by one; SQLite has one writer.
 */
export function dueEntries(db: Kysely<Database>, table: OutboxTable, now: number) {
  return db
    .selectFrom(table)
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]));
}

/**
 * The claim of up to `limit` entries of `table` due at `now`, the longest due first: leased for
 * `lease` seconds, and returned (the mails and the logout tokens; the webhooks claim by lane).
 */
export function claimDueEntries(
  db: Kysely<Database>,
  table: 'mails' | 'logout_deliveries',
  claim: { now: number; lease: number; limit: number; skipLocked: boolean },
) {
  const due = dueEntries(db, table, claim.now).orderBy('next_attempt_at').limit(claim.limit);
  return claimEntries(db, table, due, claim);
}

/** The claim of the entries `due` selects: leased for `lease` seconds from `now`, and returned. */
export function claimEntries(
  db: Kysely<Database>,
  table: OutboxTable,
  due: ReturnType<typeof dueEntries>,
  claim: { now: number; lease: number; skipLocked: boolean },
) {
  const locked = claim.skipLocked ? due.forUpdate().skipLocked() : due;
  return db
    .updateTable(table)
    .set({ locked_until: claim.now + claim.lease })
    .where('id', 'in', locked)
    .returningAll();
}

/** An attempt made at an entry: its number, when, and what failed (null when nothing did). */
export interface AttemptMade {
  attempt: number;
  at: number;
  error: string | null;
}

/** What an attempt makes of its entry: done or given up at `at`, or due again; its lease ended. */
export function attemptRecorded<Done extends string>(attempt: AttemptMade, outcome: OutboxOutcome<Done>) {
  const pending = outcome.status === 'pending';
  return {
    status: outcome.status,
    attempts: attempt.attempt,
    next_attempt_at: 'nextAttemptAt' in outcome ? outcome.nextAttemptAt : attempt.at,
    locked_until: null,
    last_error: attempt.error,
    finished_at: pending ? null : attempt.at,
  };
}

/** An outbox's entries, the newest first (the mails and the logout tokens, which are listed whole). */
export function newestEntries(db: Kysely<Database>, table: 'mails' | 'logout_deliveries', limit: number) {
  return db.selectFrom(table).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
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
    locale: event.locale,
    request_id: event.requestId,
    actor: event.actor,
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
  const { columns, values } = rowValues(db, fromEvent(event));
  const inserted = db
    .insertInto('events')
    .columns(columns)
    .expression(values.where((eb) => eb.exists(condition)));
  return [inserted, enqueueDeliveries(db, event)];
}

/** A webhook's `events` when it wants every type, those added to the catalogue later too. */
export const EVERY_EVENT_TYPE = '*';

/**
 * One delivery per webhook that wants the event: subscribed to its type, and in its audience
 * (../events/webhooks/audience.ts: the operator's, the user's whom the event is about, or the owner's
 * of the app it is about when the type is one an app's owner hears of), and not a disabled user's.
 * Only if the event itself was written (an event may be written conditionally, insertEventsIf).
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
    // Every type (the wildcard), or the type as a whole word of the space-separated list; `_` is a LIKE
    // wildcard, so escaped.
    .where((eb) =>
      eb.or([
        eb('w.events', '=', EVERY_EVENT_TYPE),
        sql<boolean>`' ' || w.events || ' ' like ${`% ${event.type.replace(/[\\%_]/g, '\\$&')} %`} escape '\\'`,
      ]),
    )
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
    // A disabled user's webhooks hear nothing of what happens while they are disabled.
    .where((eb) =>
      eb.or([
        eb('w.owner_id', 'is', null),
        eb.exists(
          eb.selectFrom('users as o').select('o.id').whereRef('o.id', '=', 'w.owner_id').where('o.disabled', '=', 0),
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
