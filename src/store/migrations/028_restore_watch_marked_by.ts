// Issue 39, restores detected under several instances: the activity mark says which instance bumped
// it last (a random id per process). With two instances, one that had seen the counter lower could
// bump a restored counter back up to what the other had seen, and the restore went unnoticed; a
// counter equal to the one an instance wrote, written by another, is now a restore too. Frozen: no
// current types.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table restore_watch add column marked_by text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table restore_watch drop column marked_by`.execute(db);
}
