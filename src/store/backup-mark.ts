// What ./backup.ts and each database's backup (./sqlite/backup.ts, ./postgres/backup.ts) share.

/** The mark a backup carries: a row of restore_fences whose fenced_at is null. */
export interface BackupMark {
  id: string;
  /** When the backup was taken, epoch seconds. */
  takenAt: number;
}

export const NOT_MIGRATED =
  'the database predates `tessera backup` (migration 005_restore_fences is not applied): take this backup by ' +
  'hand and run `tessera restore-finish` after restoring it (docs/backup.md), or run `tessera migrate` first';
