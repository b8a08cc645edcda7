// `tessera backup`: a consistent copy of the database, owner-only, marked so that the first start on
// a database restored from it fences it (./restores.ts): nothing revoked, rotated or retired after
// the backup comes back. SQLite copies with VACUUM INTO (./sqlite/backup.ts), PostgreSQL with
// pg_dump (./postgres/backup.ts). Neither migrates the database: a backup before an upgrade is taken
// of the schema as it is.
import { resolve } from 'node:path';
import { backupPostgres } from './postgres/backup.ts';
import { backupSqlite } from './sqlite/backup.ts';

/** The mark a backup carries: a row of restore_fences whose fenced_at is null. */
export interface BackupMark {
  id: string;
  /** When the backup was taken, epoch seconds. */
  takenAt: number;
}

export const NOT_MIGRATED =
  'the database predates `tessera backup` (migration 005_restore_fences is not applied): take this backup by ' +
  'hand and run `tessera restore-finish` after restoring it (docs/backup.md), or run `tessera migrate` first';

export async function backupDatabase(databaseUrl: string, output: string, mark: BackupMark): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file === '' || file === ':memory:') throw new Error('DATABASE_URL: an in-memory database has no backup');
    return backupSqlite(resolve(file), resolve(output), mark);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return backupPostgres(databaseUrl, resolve(output), mark);
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}
