// Issue 39: a passkey whose signature counter went back (WebAuthn §6.1.1: a cloned authenticator?)
// is suspended: refused from then on until its user removes it. Null: not suspended. Additive, so the
// release before runs on it (it ignores the column, and accepts the passkey). Frozen: no current types.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('passkeys').addColumn('suspended_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('passkeys').dropColumn('suspended_at').execute();
}
