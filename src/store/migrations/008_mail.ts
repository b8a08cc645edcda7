// Issue 34, mail: the outbox of mails (`mails`, delivered by src/mail/delivery.ts on the same outbox
// machinery as webhooks, src/events/outbox.ts) and the single-use tokens their links carry
// (`mail_tokens`, each stored as its SHA-256 only).
//
// `mails`: one row per mail, written in the same transaction as what causes it. The message (subject,
// plain text and HTML, with its link) is encrypted under TESSERA_SECRET while it waits and erased
// (null) once it is sent or given up: what stays is who it was for, its kind and its fate.
//
// `mail_tokens`: the SHA-256 (hex) of each link's token, what it is for (`reset`, `verify`, `invite`,
// `signup`), whose it is, the address it went to, the stamp of the password it was issued under (a
// reset dies when the password changes), what a sign-up carries until it is verified (JSON), and
// when it expires and was used (and by which redemption: the effects written with a redemption are
// conditioned on it, so that of two at once only one has any). Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table mails (id text primary key, kind text not null, user_id text, recipient text not null,
    message_enc text, status text not null, attempts integer not null, retry_base integer not null,
    next_attempt_at bigint not null, locked_until bigint, created_at bigint not null, last_error text,
    finished_at bigint)`.execute(db);
  await sql`create index mails_due on mails (status, next_attempt_at)`.execute(db);
  await sql`create index mails_created_at on mails (created_at)`.execute(db);
  await sql`create table mail_tokens (hash text primary key, purpose text not null, user_id text,
    email text not null, stamp text, data text, created_at bigint not null, expires_at bigint not null,
    used_at bigint, used_by text)`.execute(db);
  await sql`create index mail_tokens_user on mail_tokens (user_id, purpose)`.execute(db);
  await sql`create index mail_tokens_expires_at on mail_tokens (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('mail_tokens').execute();
  await db.schema.dropTable('mails').execute();
}
