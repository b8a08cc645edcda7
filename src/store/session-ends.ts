// Where sessions end: every statement that deletes sessions is built here (but housekeeping's of the
// expired ones, ./housekeeping.ts: a session that ran out is no logout, as node-oidc-provider holds),
// together with the logout tokens their end owes (OpenID Connect Back-Channel Logout 1.0), so that no
// way of ending a session can forget them: RP-initiated logout, `users sign-out`, a password changed,
// reset or set, a factor removed or reset, a user disabled or deleted, a restore's fence, and the
// sign-in of someone else in the same browser. The tokens are rows of the outbox
// (./logout-deliveries.ts, posted by src/logout/delivery.ts), inserted from what the database holds
// when the write runs, before the delete: each client with a `backchannel_logout_uri` that has a grant
// from an ended session (its `sid`), or, when every session of a user ends, for grants from before
// sessions had a sid, that has a live grant of the user (`sub` only, not for a client that requires
// `sid`). The token is signed at each attempt, so that it is fresh.
import { randomUUID } from 'node:crypto';
import { type Kysely, type SelectQueryBuilder, sql, type SqlBool } from 'kysely';
import type { Database } from './tables.ts';

/**
 * Which sessions end: one (by its id, the cookie's hash), every one of a user, or every one of a user
 * but `except` (the session that changed a password or removed a factor), or all (a restore's fence).
 */
export type EndedSessions = { sessionId: string } | { userId: string; except?: string } | { all: true };

/** A condition the write's statements run under: that it finds a row when they run. */
export type EndCondition = SelectQueryBuilder<Database, keyof Database, unknown>;

/**
 * When the sessions end (`now`); or that the session is replaced by the same person's next sign-in in
 * this browser, which keeps its `sid` (../http/browser.ts): nobody signed out, so no logout token.
 * With `when`, only if it finds a row when the statements run (the change's own condition).
 */
export type EndOptions = ({ now: number } | { replaced: true }) & { when?: EndCondition | undefined };

/**
 * The statements that end the sessions `ended`, to run in one write with the change that ends them:
 * the logout tokens' inserts, then the delete, always last (its count is the write's last).
 */
export function endSessions(db: Kysely<Database>, ended: EndedSessions, options: EndOptions) {
  const { when } = options;
  const deleted = db
    .deleteFrom('sessions')
    .where(which(ended, 'sessions'))
    .$if(when !== undefined, (q) => q.where((eb) => eb.exists(when!)));
  const logouts = 'now' in options ? enqueueLogouts(db, ended, options.now, when) : [];
  return [...logouts, deleted];
}

/** The condition on the sessions table (as `table`) that picks the `ended` ones. */
function which(ended: EndedSessions, table: 's' | 'sessions') {
  const column = (name: string) => sql.ref(`${table}.${name}`);
  if ('sessionId' in ended) return sql<SqlBool>`${column('id')} = ${ended.sessionId}`;
  if ('all' in ended) return sql<SqlBool>`1 = 1`;
  const ofUser = sql<SqlBool>`${column('user_id')} = ${ended.userId}`;
  return ended.except === undefined ? ofUser : sql<SqlBool>`${ofUser} and ${column('id')} <> ${ended.except}`;
}

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

/** The inserts of the logout tokens of the sessions `ended`, to run before their delete. */
function enqueueLogouts(db: Kysely<Database>, ended: EndedSessions, now: number, when: EndCondition | undefined) {
  // Unique per write: it prefixes the deliveries' ids.
  const batch = randomUUID();
  const text = (value: string) => sql<string>`cast(${value} as text)`;
  const at = sql<number>`cast(${now} as bigint)`;
  const outboxColumns = [
    sql<string>`'pending'`.as('status'),
    sql<number>`0`.as('attempts'),
    sql<number>`0`.as('retry_base'),
    at.as('next_attempt_at'),
    at.as('created_at'),
  ];
  const bySession = db
    .selectFrom('sessions as s')
    .innerJoin('clients as c', (join) => join.on('c.backchannel_logout_uri', 'is not', null))
    // A step-up's session and the one it replaces share a sid for a moment (../http/browser.ts).
    .distinct()
    .select([
      sql<string>`${text(batch)} || '.' || s.sid || '.' || c.client_id`.as('id'),
      'c.client_id',
      sql<string>`c.backchannel_logout_uri`.as('uri'),
      's.user_id as sub',
      's.sid',
      ...outboxColumns,
    ])
    .where('s.sid', 'is not', null)
    .where(which(ended, 's'))
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
  if ('userId' in ended && ended.except === undefined) {
    // Grants from before sessions had a sid: the user as a whole (`sub` only), where the client accepts it.
    const byUser = db
      .selectFrom('clients as c')
      .select([
        sql<string>`${text(batch)} || '.' || c.client_id`.as('id'),
        'c.client_id',
        sql<string>`c.backchannel_logout_uri`.as('uri'),
        text(ended.userId).as('sub'),
        sql<string | null>`null`.as('sid'),
        ...outboxColumns,
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
