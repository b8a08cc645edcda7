// Issue 40, logs for alerting: each event keeps the id of the request it came from (the `reqId` of
// that request's log lines, src/http/request-id.ts), null for the command line, the server's own work
// and events recorded before, so that a log line and the audit trail can be joined; and the events of
// one request are found by it (`tessera events list --request ID`). Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column request_id text`.execute(db);
  await sql`create index events_request_id on events (request_id) where request_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_request_id`.execute(db);
  await sql`alter table events drop column request_id`.execute(db);
}
