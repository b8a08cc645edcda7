// Issue 43, the device authorization grant (RFC 8628). `device_authorizations`: one row per request
// at the device authorization endpoint, under a random id (the id of the grant its approval issues),
// with the SHA-256 of its device code and of its user code (never the codes), the client, scope and
// resource asked for, its status (`pending`, `approved`, `denied`), who decided and how they had
// signed in (for the ID token), the polling interval and the last poll (RFC 8628 §3.5 slow_down), and
// its expiry. Housekeeping deletes a row a grace period (10 minutes) after it expired. Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table device_authorizations (id text primary key, device_code_hash text not null,
    user_code_hash text not null, client_id text not null, scope text not null, resource text,
    status text not null, user_id text, auth_time bigint, amr text, acr text, sid text,
    poll_interval integer not null, last_polled_at bigint, expires_at bigint not null,
    created_at bigint not null, decided_at bigint)`.execute(db);
  await sql`create unique index device_authorizations_device_code on device_authorizations (device_code_hash)`.execute(
    db,
  );
  await sql`create unique index device_authorizations_user_code on device_authorizations (user_code_hash)`.execute(db);
  await sql`create index device_authorizations_expires_at on device_authorizations (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('device_authorizations').execute();
}
