// Issue 43, agents: token exchange (RFC 8693) and the Identity Assertion JWT Authorization Grant
// (ID-JAG). `clients.exchange_audiences`: the audiences (space-separated URIs) the operator lets a
// client exchange tokens for (`clients create|update --exchange-audience`), null for none.
// `upstream_providers.accept_id_jag` (0/1): the provider's ID-JAGs are redeemed at the token
// endpoint (`providers create|update --accept-id-jag`). `connections`: the operator's policy for
// minting ID-JAGs, one per client and audience (the other authorization server's issuer), with the
// client's id there, the scopes it may ask for there and the resource, if one. Frozen: no current
// types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients add column exchange_audiences text`.execute(db);
  await sql`alter table upstream_providers add column accept_id_jag integer not null default 0`.execute(db);
  await sql`create table connections (id text primary key, client_id text not null, audience text not null,
    remote_client_id text not null, scope text not null, resource text, created_at bigint not null,
    updated_at bigint not null)`.execute(db);
  await sql`create unique index connections_client_audience on connections (client_id, audience)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('connections').execute();
  await sql`alter table upstream_providers drop column accept_id_jag`.execute(db);
  await sql`alter table clients drop column exchange_audiences`.execute(db);
}
