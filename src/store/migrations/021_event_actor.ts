// Issue 41, operating without a shell: every change an operator makes names who made it. `actor` says
// who acted for an event recorded by an operator's tool: `cli` for the command line, `client:ID` for an
// admin client of the admin API, `user:ID` for a person with the admin role (the API or the console);
// null for what people do to their own accounts and for events recorded before. Frozen: no current
// types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column actor text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events drop column actor`.execute(db);
}
