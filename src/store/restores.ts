// Restore fences: a database restored from a backup must never accept what was revoked, rotated
// away or retired after the backup was taken, and it cannot know what that was. So the first start
// on a restored database (detected by the mark `tessera backup` leaves in its copy, ./backup.ts), or
// `tessera restore-finish` after a restore made by other means, ends everything the backup could
// bring back, in one write: every grant (refresh-token family) revoked, every session ended, every
// signing key removed (the server makes new ones as it starts), and the restore recorded. The
// latest fence's id is an epoch the authorization codes are sealed in (src/oauth/codes.ts), so a
// code issued before the restore does not open after it; each fence has an id of its own, so a
// backup restored twice starts a new epoch each time.
import type { Kysely } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { insertEventsWhen } from './outbox.ts';
import { endSessions } from './session-ends.ts';
import type { Database, RestoreFenceRow } from './tables.ts';

export interface RestoreFence {
  id: string;
  /** When the backup was taken; null for a restore finished with `tessera restore-finish`. */
  takenAt: number | null;
  fencedAt: number;
}

export interface RestoreStore {
  /**
   * Fences the database when a backup's mark is pending in it, or in any case with `force` (a
   * restore made by other means): every grant revoked, every session ended, every signing key
   * removed, `event` recorded and the fence (under `id`) written in place of the mark, all in one
   * write, once however many instances start at the same moment. The fence, or undefined when
   * nothing was pending.
   */
  fenceRestore(input: {
    id: string;
    now: number;
    force: boolean;
    event: SecurityEvent;
  }): Promise<RestoreFence | undefined>;
  /** The id of the latest fence, '' before any: the epoch authorization codes are sealed in. */
  restoreEpoch(): Promise<string>;
}

/**
 * The fence's statements, to run in one write after whatever inserts a pending mark: when a mark is
 * pending as they run, every grant revoked, every session ended, every signing key removed, `event`
 * recorded and the fence (under `id`) written in place of the marks, its row returned; else nothing.
 */
export function fenceStatements(db: Kysely<Database>, input: { id: string; now: number; event: SecurityEvent }) {
  const { now } = input;
  const pending = db.selectFrom('restore_fences').select('id').where('fenced_at', 'is', null);
  const fence = db
    .insertInto('restore_fences')
    .columns(['id', 'taken_at', 'fenced_at'])
    .expression(
      db
        .selectFrom('restore_fences')
        .select((eb) => [eb.val(input.id).as('id'), eb.fn.max('taken_at').as('taken_at'), eb.val(now).as('fenced_at')])
        .where('fenced_at', 'is', null)
        .having((eb) => eb.fn.countAll(), '>', 0),
    )
    .returning(['id', 'taken_at']);
  return [
    // First, the pending marks' rows are locked: of instances starting at the same moment on
    // PostgreSQL, the others wait here, then find no mark (each statement reads anew) and change
    // nothing. SQLite runs one write at a time anyway.
    db
      .updateTable('restore_fences')
      .set((eb) => ({ taken_at: eb.ref('taken_at') }))
      .where('fenced_at', 'is', null),
    ...insertEventsWhen(db, input.event, pending),
    // The clients signed in from the sessions that end are told (Back-Channel Logout 1.0), as at any
    // end: a session the backup brought back may have ended since, and hearing of it twice is harmless.
    ...endSessions(db, { all: true }, { now, when: pending }),
    db
      .updateTable('grants')
      .set({ revoked_at: now })
      .where('revoked_at', 'is', null)
      .where((eb) => eb.exists(pending)),
    db.deleteFrom('signing_keys').where((eb) => eb.exists(pending)),
    fence,
    db.deleteFrom('restore_fences').where('fenced_at', 'is', null),
  ];
}

/** The latest fence's id, '' before any: the epoch authorization codes are sealed in. */
export function latestFence(db: Kysely<Database>) {
  return db
    .selectFrom('restore_fences')
    .select('id')
    .where('fenced_at', 'is not', null)
    .orderBy('fenced_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1);
}

/** The restore fence: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withRestores<Base extends AggregateClass>(Base: Base) {
  abstract class Restores extends Base implements RestoreStore {
    async fenceRestore(input: {
      id: string;
      now: number;
      force: boolean;
      event: SecurityEvent;
    }): Promise<RestoreFence | undefined> {
      const { db } = this;
      const { now } = input;
      const pending = db.selectFrom('restore_fences').select('id').where('fenced_at', 'is', null);
      // Every start asks; only a restored database is written to (a start on a read-only file reads).
      if (!input.force && (await pending.limit(1).execute()).length === 0) return undefined;
      const mark = db.insertInto('restore_fences').values({ id: `mark:${input.id}`, taken_at: null, fenced_at: null });
      const rows = await this.writeRows<Pick<RestoreFenceRow, 'id' | 'taken_at'>>(
        ...(input.force ? [mark] : []),
        ...fenceStatements(db, input),
      );
      const [fenced] = rows;
      if (!fenced) return undefined;
      return { id: fenced.id, takenAt: fenced.taken_at === null ? null : Number(fenced.taken_at), fencedAt: now };
    }

    async restoreEpoch(): Promise<string> {
      const latest = await latestFence(this.db).executeTakeFirst();
      return latest?.id ?? '';
    }
  }
  return Restores;
}
