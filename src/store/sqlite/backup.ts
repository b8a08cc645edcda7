// A backup of an SQLite database: a consistent copy with VACUUM INTO (which the running server does
// not notice: a read transaction on a connection of its own), written to a file created owner-only
// before SQLite fills it, then marked so that a start on it fences it (../restores.ts).
import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { type BackupMark, NOT_MIGRATED } from '../backup-mark.ts';

export function backupSqlite(file: string, output: string, mark: BackupMark): void {
  if (!existsSync(file)) throw new Error(`no SQLite database at ${file}`);
  const source = new DatabaseSync(file, { readOnly: true });
  try {
    const marks = source.prepare("select 1 from sqlite_master where type = 'table' and name = 'restore_fences'").get();
    if (!marks) throw new Error(NOT_MIGRATED);
    // Created empty and owner-only first (VACUUM INTO takes an empty file): the copy holds password
    // hashes and encrypted keys.
    closeSync(openSync(output, 'wx', 0o600));
    try {
      source.prepare('VACUUM INTO ?').run(output);
      const copy = new DatabaseSync(output);
      try {
        copy
          .prepare('insert into restore_fences (id, taken_at, fenced_at) values (?, ?, null)')
          .run(mark.id, mark.takenAt);
      } finally {
        copy.close();
      }
    } catch (err) {
      rmSync(output, { force: true });
      throw err;
    }
  } finally {
    source.close();
  }
}
