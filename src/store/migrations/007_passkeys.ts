// Issue 33, passkeys (WebAuthn): each user's credentials, and the challenges already answered.
//
// `passkeys`: one row per credential, under an id of Tessera's (the account page's forms and the
// events name it) with the authenticator's credential id unique beside it; the COSE public key and
// the credential id as base64url; the signature counter (0 for an authenticator that keeps none);
// the transports (JSON array) that excludeCredentials and allowCredentials pass back to the browser;
// whether the credential may be synced (backup eligible, fixed for its life) and is (backed up).
//
// `webauthn_challenges`: the SHA-256 of every challenge a passkey answered, kept until the challenge
// would have expired, so that none is accepted twice (src/authn/passkeys/ceremony.ts). Frozen: no
// current types.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table passkeys (id text primary key, user_id text not null, credential_id text not null unique,
    public_key text not null, sign_count bigint not null, transports text not null,
    backup_eligible integer not null, backed_up integer not null, name text not null, created_at bigint not null,
    last_used_at bigint)`.execute(db);
  await sql`create index passkeys_user_id on passkeys (user_id)`.execute(db);
  await sql`create table webauthn_challenges (hash text primary key, expires_at bigint not null)`.execute(db);
  await sql`create index webauthn_challenges_expires_at on webauthn_challenges (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}
