// Issue 42, clients that authenticate with a key and push their requests: a client's public keys
// (`jwks`, a JSON JWK Set, or `jwks_uri`), its secret encrypted under TESSERA_SECRET where it signs
// its assertions with it (`secret_enc`, client_secret_jwt: the server must hold the secret itself),
// whether it must push its authorization requests (`require_par`, RFC 9126 §6) and the algorithm of
// its request objects (`request_object_signing_alg`). Two tables of one-time things shared by every
// instance: the `jti`s of client assertions already used (RFC 7523 §3, kept until the assertion
// expires), and the pushed authorization requests waiting for their one use (RFC 9126 §2.2).
// Housekeeping deletes both once expired. Frozen: no current types.
import { type Kysely, sql } from 'kysely';

const COLUMNS = ['jwks', 'jwks_uri', 'secret_enc', 'require_par', 'request_object_signing_alg'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema
      .alterTable('clients')
      .addColumn(column, column === 'require_par' ? 'integer' : 'text')
      .execute();
  }
  await sql`create table used_jtis (id text primary key, expires_at bigint not null)`.execute(db);
  await sql`create index used_jtis_expires_at on used_jtis (expires_at)`.execute(db);
  await sql`create table pushed_requests (id text primary key, client_id text not null, params text not null,
    expires_at bigint not null)`.execute(db);
  await sql`create index pushed_requests_expires_at on pushed_requests (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pushed_requests').execute();
  await db.schema.dropTable('used_jtis').execute();
  for (const column of [...COLUMNS].reverse()) await db.schema.alterTable('clients').dropColumn(column).execute();
}
