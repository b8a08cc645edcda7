// Issue 33, the authentication module: a session records each factor of its sign-in (src/authn), and
// a grant the methods and level its ID tokens state (`amr`, `acr`), so a refresh needs no other read.
// Nullable columns: a session from before has no factors recorded (it signed in with a password at
// its auth_time), a grant from before states neither claim. Frozen: no current types.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('factors', 'text').execute();
  await db.schema.alterTable('grants').addColumn('amr', 'text').execute();
  await db.schema.alterTable('grants').addColumn('acr', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('grants').dropColumn('acr').execute();
  await db.schema.alterTable('grants').dropColumn('amr').execute();
  await db.schema.alterTable('sessions').dropColumn('factors').execute();
}
