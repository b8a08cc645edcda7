// Every migration, in order, and how they run. A static map (no directory scanning) so it works
// without a build step.
import { type Kysely, type Migration, Migrator, type NoMigrations } from 'kysely';
import type { Database } from '../tables.ts';
import * as initial from './001_initial.ts';
import * as authenticationFactors from './002_authentication_factors.ts';
import * as restoreFences from './005_restore_fences.ts';
import * as passkeys from './007_passkeys.ts';

export const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_authentication_factors': authenticationFactors,
  '005_restore_fences': restoreFences,
  '007_passkeys': passkeys,
};

/** Runs pending migrations, or migrates up or down to `to`; returns the names applied or undone. */
export async function migrate(db: Kysely<Database>, to?: string | NoMigrations): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'tessera_migrations',
    migrationLockTableName: 'tessera_migrations_lock',
  });
  const { error, results } = to === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
