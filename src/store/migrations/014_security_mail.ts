// Issue 39, security notifications (src/mail/security.ts): each event keeps the language of the page
// it came from (`locale`, null for the command line and for events recorded before), so that the mail
// that tells the person of it later speaks that language; and the events of a few types are found by
// type and time (`events_type_at`), as each instance looks for the ones not yet told every second.
// Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column locale text`.execute(db);
  await sql`create index events_type_at on events (type, at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_type_at`.execute(db);
  await sql`alter table events drop column locale`.execute(db);
}
