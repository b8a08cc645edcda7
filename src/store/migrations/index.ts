// Every migration, in order, and how they run. A static map (no directory scanning) so it works
// without a build step. Migrations are expand/contract (docs/upgrades.md): a migration only adds to
// the schema, and what the previous release still uses is removed no sooner than two releases later,
// so a release runs on a database a newer release has migrated: during a rolling upgrade an old
// instance that restarts, and after one the release before, start on it rather than refuse it
// (test/store/previous-release.test.ts runs the previous release so; schema-contract.test.ts checks
// each new migration).
import { type Kysely, type Migration, Migrator, type NoMigrations, sql } from 'kysely';
import { DatabaseUnavailable } from '../faults.ts';
import type { Database } from '../tables.ts';
import * as initial from './001_initial.ts';
import * as authenticationFactors from './002_authentication_factors.ts';
import * as clientTokenLifetimes from './004_client_token_lifetimes.ts';
import * as restoreFences from './005_restore_fences.ts';
import * as secondFactors from './006_second_factors.ts';
import * as passkeys from './007_passkeys.ts';
import * as mail from './008_mail.ts';
import * as upstreamProviders from './009_upstream_providers.ts';
import * as throttlePending from './010_throttle_pending.ts';
import * as passkeySuspension from './011_passkey_suspension.ts';
import * as securityMail from './014_security_mail.ts';
import * as restoreWatch from './015_restore_watch.ts';
import * as eventRequestId from './016_event_request_id.ts';
import * as eventActor from './021_event_actor.ts';
import * as clientKeys from './017_client_keys.ts';
import * as roles from './018_roles.ts';
import * as standardClaims from './019_standard_claims.ts';
import * as backchannelLogout from './020_backchannel_logout.ts';
import * as deviceAuthorizations from './023_device_authorizations.ts';
import * as dpop from './024_dpop.ts';
import * as agents from './025_agents.ts';
import * as frontchannelLogout from './027_frontchannel_logout.ts';
import * as restoreWatchMarkedBy from './028_restore_watch_marked_by.ts';

export const migrations: Record<string, Migration> = {
  '001_initial': initial,
  '002_authentication_factors': authenticationFactors,
  '004_client_token_lifetimes': clientTokenLifetimes,
  '005_restore_fences': restoreFences,
  '006_second_factors': secondFactors,
  '007_passkeys': passkeys,
  '008_mail': mail,
  '009_upstream_providers': upstreamProviders,
  '010_throttle_pending': throttlePending,
  '011_passkey_suspension': passkeySuspension,
  '014_security_mail': securityMail,
  '015_restore_watch': restoreWatch,
  '016_event_request_id': eventRequestId,
  '017_client_keys': clientKeys,
  '018_roles': roles,
  '019_standard_claims': standardClaims,
  '020_backchannel_logout': backchannelLogout,
  '021_event_actor': eventActor,
  '023_device_authorizations': deviceAuthorizations,
  '024_dpop': dpop,
  '025_agents': agents,
  '027_frontchannel_logout': frontchannelLogout,
  '028_restore_watch_marked_by': restoreWatchMarkedBy,
};

interface AppliedMigration {
  name: string;
  /** When it was applied, as the migration table keeps it (an ISO 8601 time). */
  appliedAt: string;
}

/** The migrations applied to the database, in the order applied; none before the first. */
async function appliedMigrations(db: Kysely<Database>): Promise<AppliedMigration[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === 'tessera_migrations')) return [];
  const { rows } = await sql<{
    name: string;
    timestamp: string;
  }>`select name, timestamp from tessera_migrations order by timestamp, name`.execute(db);
  return rows.map((row) => ({ name: row.name, appliedAt: row.timestamp }));
}

async function applied(db: Kysely<Database>): Promise<string[]> {
  return (await appliedMigrations(db)).map((migration) => migration.name);
}

export interface MigrationStatus {
  /** This release's migrations the database has. */
  applied: AppliedMigration[];
  /** This release's migrations the database lacks: the next start or `tessera migrate` applies them. */
  pending: string[];
  /** Migrations the database has that this release does not know: a newer release applied them. */
  newer: AppliedMigration[];
}

/** Where the database stands against this release's migrations; changes nothing. */
export async function migrationStatus(db: Kysely<Database>): Promise<MigrationStatus> {
  const known = Object.keys(migrations);
  const done = await appliedMigrations(db);
  const names = done.map((migration) => migration.name);
  return {
    applied: done.filter((migration) => known.includes(migration.name)),
    pending: known.filter((name) => !names.includes(name)),
    newer: done.filter((migration) => !known.includes(migration.name)),
  };
}

/** Runs pending migrations, or migrates up or down to `to`; returns the names applied or undone. */
export async function migrate(db: Kysely<Database>, to?: string | NoMigrations): Promise<string[]> {
  if (to === undefined) {
    const known = Object.keys(migrations);
    const done = await applied(db);
    const newer = done.filter((name) => !known.includes(name));
    if (newer.length > 0) {
      const missing = known.filter((name) => !done.includes(name));
      if (missing.length > 0)
        throw new Error(
          `the database has migrations of a newer release (${newer.join(', ')}) but not ${missing.join(', ')} ` +
            'of this one: run the newer release',
        );
      return [];
    }
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'tessera_migrations',
    migrationLockTableName: 'tessera_migrations_lock',
    // Numbers are given to changes as they are begun, and they land in another order: a database that
    // ran 007 before 004 existed gets 004 when it comes, rather than refusing to start.
    allowUnorderedMigrations: true,
  });
  const { error, results } = to === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
  const succeeded = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // A database that cannot be reached is waited for (src/lifecycle.ts): its fault is kept as it is.
    if (failed === undefined || error instanceof DatabaseUnavailable) throw error;
    // With transactional DDL (PostgreSQL) the run was one transaction, and the failure undid it all.
    const kept = db.getExecutor().adapter.supportsTransactionalDdl ? [] : succeeded;
    const before = kept.length > 0 ? ` (applied before it: ${kept.join(', ')})` : '';
    throw new Error(`migration ${failed} failed${before}: ${(error as Error).message}`, { cause: error });
  }
  return succeeded;
}
