// `tessera backup`: a consistent copy of the database, owner-only, marked so that the first start on
// a database restored from it fences it (./restores.ts): nothing revoked, rotated or retired after
// the backup comes back. SQLite copies with VACUUM INTO (./sqlite/backup.ts), PostgreSQL with
// pg_dump (./postgres/backup.ts). Neither migrates the database: a backup before an upgrade is taken
// of the schema as it is.
import { resolve } from 'node:path';
import type { BackupMark } from './backup-mark.ts';
import { backupPostgres } from './postgres/backup.ts';
import { backupSqlite } from './sqlite/backup.ts';

export { type BackupMark, NOT_MIGRATED } from './backup-mark.ts';

export async function backupDatabase(databaseUrl: string, output: string, mark: BackupMark): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    if (file === '' || file === ':memory:') throw new Error('DATABASE_URL: an in-memory database has no backup');
    return backupSqlite(resolve(file), resolve(output), mark);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return backupPostgres(databaseUrl, resolve(output), mark);
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}
