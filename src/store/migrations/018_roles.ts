// Issue 41, roles in tokens and who may administer: a user's roles (space-separated names, '' for
// none), read with the user wherever it is read already (with the session or the grant); a client's
// mark as an admin client (the only clients that may hold the `admin` scope) and the roles it may
// see (space-separated; null: every role), read with the client (cached). Frozen: no current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column roles text not null default ''`.execute(db);
  await sql`alter table clients add column admin integer not null default 0`.execute(db);
  await sql`alter table clients add column allowed_roles text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table clients drop column allowed_roles`.execute(db);
  await sql`alter table clients drop column admin`.execute(db);
  await sql`alter table users drop column roles`.execute(db);
}
