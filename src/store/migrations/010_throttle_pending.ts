// Issue 39, throttles that count failures: a key's attempts in flight kept apart from its settled
// failures (src/authn/throttle.ts). `pending` is how many attempts were admitted and not yet settled
// (a success takes its own back, a failure turns it into a failure); `pending_until` is their lease:
// after it they no longer count, so that the attempts of an instance that died mid-check do not hold
// the key. Additive, with defaults: the build before reads and writes the rows as it did.
// Frozen: no current types.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('throttles')
    .addColumn('pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('throttles')
    .addColumn('pending_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('throttles').dropColumn('pending_until').execute();
  await db.schema.alterTable('throttles').dropColumn('pending').execute();
}
