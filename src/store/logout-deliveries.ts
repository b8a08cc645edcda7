// The outbox of logout tokens (OpenID Connect Back-Channel Logout 1.0, delivered by
// src/logout/delivery.ts on the outbox worker webhooks and mails share): one row per client per
// session end, written by the same write as the end (./sessions.ts), from what the database holds when
// it runs: each client with a `backchannel_logout_uri` that has a grant from the ended session (its
// `sid`), or, for grants from before sessions had one, that has a live grant of the user (`sub` only,
// not for a client that requires `sid`). The token is signed at each attempt, so that it is fresh.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { OutboxOutcome } from '../events/outbox.ts';
import { Aggregate } from './aggregate.ts';
import { columns, renamed } from './columns.ts';
import { attemptRecorded, claimEntries, dueEntries, type OutboxEntry } from './outbox.ts';
import type { Database, LogoutDeliveryRow } from './tables.ts';

/** A logout token to post: to `uri` of `clientId`, about the user `sub` and the session `sid`. */
export interface LogoutDelivery extends OutboxEntry<'delivered'> {
  id: string;
  clientId: string;
  uri: string;
  sub: string;
  sid: string | null;
}

export interface LogoutDeliveryStore {
  /** Takes up to `limit` deliveries due at `now` for `lease` seconds (PostgreSQL: FOR UPDATE SKIP LOCKED). */
  claimLogoutDeliveries(now: number, lease: number, limit: number): Promise<LogoutDelivery[]>;
  /** Records an attempt: delivered, given up, or due again at `nextAttemptAt`. */
  recordLogoutAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'delivered'>,
  ): Promise<void>;
  /** The newest first. */
  listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]>;
}

const deliveryRows = renamed(
  columns<LogoutDeliveryRow>()(
    // eslint-disable-next-line max-len -- one string literal, so that its type lists the columns
    'id client_id uri sub sid status attempts retry_base next_attempt_at locked_until created_at last_error finished_at',
  ),
);
const toDelivery: (row: LogoutDeliveryRow) => LogoutDelivery = deliveryRows.to;

const INSERTED = [
  'id',
  'client_id',
  'uri',
  'sub',
  'sid',
  'status',
  'attempts',
  'retry_base',
  'next_attempt_at',
  'created_at',
] as const;

/** Which sessions end: one (by its id, the cookie's hash) or every one of a user. */
export type EndedSessions = { sessionId: string } | { userId: string };

/**
 * The inserts of the logout deliveries of the sessions `ended`, to run in the same write as their
 * deletion and before it; with `when`, only if it finds a row when they run (the deletion's own
 * condition). `batch` (unique per call) prefixes the deliveries' ids.
 */
export function enqueueLogouts(
  db: Kysely<Database>,
  ended: EndedSessions,
  batch: string,
  now: number,
  when?: SelectQueryBuilder<Database, keyof Database, unknown>,
) {
  const text = (value: string) => sql<string>`cast(${value} as text)`;
  const at = sql<number>`cast(${now} as bigint)`;
  const bySession = db
    .selectFrom('sessions as s')
    .innerJoin('clients as c', (join) => join.on('c.backchannel_logout_uri', 'is not', null))
    .select([
      sql<string>`${text(batch)} || '.' || s.sid || '.' || c.client_id`.as('id'),
      'c.client_id',
      sql<string>`c.backchannel_logout_uri`.as('uri'),
      's.user_id as sub',
      's.sid',
      sql<string>`'pending'`.as('status'),
      sql<number>`0`.as('attempts'),
      sql<number>`0`.as('retry_base'),
      at.as('next_attempt_at'),
      at.as('created_at'),
    ])
    .where('s.sid', 'is not', null)
    .where((eb) =>
      'sessionId' in ended ? eb('s.id', '=', text(ended.sessionId)) : eb('s.user_id', '=', text(ended.userId)),
    )
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('grants as g')
          .select('g.id')
          .whereRef('g.sid', '=', 's.sid')
          .whereRef('g.client_id', '=', 'c.client_id'),
      ),
    );
  const inserts = [
    db
      .insertInto('logout_deliveries')
      .columns(INSERTED)
      .expression(bySession.$if(when !== undefined, (q) => q.where((eb) => eb.exists(when!)))),
  ];
  if ('userId' in ended) {
    // Grants from before sessions had a sid: the user as a whole (`sub` only), where the client accepts it.
    const byUser = db
      .selectFrom('clients as c')
      .select([
        sql<string>`${text(batch)} || '.' || c.client_id`.as('id'),
        'c.client_id',
        sql<string>`c.backchannel_logout_uri`.as('uri'),
        text(ended.userId).as('sub'),
        sql<string | null>`null`.as('sid'),
        sql<string>`'pending'`.as('status'),
        sql<number>`0`.as('attempts'),
        sql<number>`0`.as('retry_base'),
        at.as('next_attempt_at'),
        at.as('created_at'),
      ])
      .where('c.backchannel_logout_uri', 'is not', null)
      .where('c.backchannel_logout_session_required', '=', 0)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('grants as g')
            .select('g.id')
            .where('g.user_id', '=', text(ended.userId))
            .whereRef('g.client_id', '=', 'c.client_id')
            .where('g.sid', 'is', null)
            .where('g.revoked_at', 'is', null),
        ),
      );
    inserts.push(
      db
        .insertInto('logout_deliveries')
        .columns(INSERTED)
        .expression(byUser.$if(when !== undefined, (q) => q.where((eb) => eb.exists(when!)))),
    );
  }
  return inserts;
}

export class LogoutDeliveries extends Aggregate implements LogoutDeliveryStore {
  async claimLogoutDeliveries(now: number, lease: number, limit: number): Promise<LogoutDelivery[]> {
    const due = dueEntries(this.db, 'logout_deliveries', now).orderBy('next_attempt_at').limit(limit);
    const claimed = claimEntries(this.db, 'logout_deliveries', due, { now, lease, skipLocked: this.skipLocked });
    return (await this.writeRows<LogoutDeliveryRow>(claimed)).map(toDelivery);
  }

  async recordLogoutAttempt(
    id: string,
    attempt: { attempt: number; at: number; error: string | null },
    outcome: OutboxOutcome<'delivered'>,
  ): Promise<void> {
    await this.write(
      this.db.updateTable('logout_deliveries').set(attemptRecorded(attempt, outcome)).where('id', '=', id),
    );
  }

  async listLogoutDeliveries(limit: number): Promise<LogoutDelivery[]> {
    const rows = await this.db
      .selectFrom('logout_deliveries')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }
}
