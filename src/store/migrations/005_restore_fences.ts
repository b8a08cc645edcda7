// Restore fences (src/store/restores.ts): `tessera backup` marks its copy with a row whose fenced_at
// is null; the first start on a database restored from it (or `tessera restore-finish`) fences it.
// Frozen once released: a later change is a migration of its own.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('restore_fences')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('taken_at', 'bigint')
    .addColumn('fenced_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('restore_fences').execute();
}
