// Restores detected (src/store/restore-watch.ts): one row, the database's identity and a counter every
// instance bumps at start and on a timer, with the PostgreSQL timeline last seen. A database found
// with a lower counter than an instance saw, or on a newer timeline, went back in time.
// Frozen once released: a later change is a migration of its own.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('restore_watch')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('database', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('timeline', 'bigint')
    .addColumn('marked_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('restore_watch').execute();
}
