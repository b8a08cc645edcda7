// Issue 33, second factors: authenticator apps (TOTP, RFC 6238) and recovery codes, and a client's
// demand for two factors.
//
// `totp_credentials`: one per user, the shared secret encrypted under TESSERA_SECRET (src/tokens/
// at-rest.ts), and the last time step a code was accepted for, which a use moves forward in one
// conditional update so that a code works once, also when two requests bring it at once.
//
// `recovery_codes`: the SHA-256 of each code (with its user's id), when it was used and by which
// event: a use sets both in one conditional update, and its event is written only if that update
// was this use's.
//
// `clients.require_mfa`: the client's sign-ins need two factors (`tessera clients create|update
// --require-mfa`); read with the client, which is cached. Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table totp_credentials (user_id text primary key, secret_enc text not null,
    last_step bigint not null, created_at bigint not null, last_used_at bigint)`.execute(db);
  await sql`create table recovery_codes (user_id text not null, hash text not null, created_at bigint not null,
    used_at bigint, used_event text, constraint recovery_codes_pk primary key (user_id, hash))`.execute(db);
  await db.schema.alterTable('clients').addColumn('require_mfa', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('require_mfa').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('totp_credentials').execute();
}
