// Issue 42, OpenID Connect Back-Channel Logout 1.0. `sessions.sid`: the session's public id (OIDC
// `sid`), random and unrelated to its cookie or the cookie's hash, null for sessions from before.
// `grants.sid`: the sid of the session the grant's code came from, so that a refreshed ID token keeps
// it and a session's end finds the clients it signed in to. `clients.backchannel_logout_uri` and
// `backchannel_logout_session_required` (0/1): the client's registration (§2.2). `logout_deliveries`:
// the outbox of logout tokens (src/logout/delivery.ts), one row per client per session end, written in
// the same transaction as that end, with the retry schedule and lease every outbox has; the token is
// signed at each attempt. Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sessions add column sid text`.execute(db);
  await sql`alter table grants add column sid text`.execute(db);
  await sql`create index grants_sid on grants (sid) where sid is not null`.execute(db);
  await sql`alter table clients add column backchannel_logout_uri text`.execute(db);
  await sql`alter table clients add column backchannel_logout_session_required integer not null default 0`.execute(db);
  await sql`create table logout_deliveries (id text primary key, client_id text not null, uri text not null,
    sub text not null, sid text, status text not null, attempts integer not null, retry_base integer not null,
    next_attempt_at bigint not null, locked_until bigint, created_at bigint not null, last_error text,
    finished_at bigint)`.execute(db);
  await sql`create index logout_deliveries_due on logout_deliveries (status, next_attempt_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('logout_deliveries').execute();
  await sql`drop index grants_sid`.execute(db);
  await sql`alter table clients drop column backchannel_logout_session_required`.execute(db);
  await sql`alter table clients drop column backchannel_logout_uri`.execute(db);
  await sql`alter table grants drop column sid`.execute(db);
  await sql`alter table sessions drop column sid`.execute(db);
}
