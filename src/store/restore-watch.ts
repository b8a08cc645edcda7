// Restores detected (src/restores/watch.ts): the one row of restore_watch holds the database's
// identity, a counter every instance bumps at start and on a timer (never per request), and the
// PostgreSQL timeline last seen. An instance remembers the counter it last got; finding a lower one,
// or the database on a newer timeline, means the database went back in time without
// `tessera restore-finish`. Then it fences it as restore-finish does (./restores.ts), in one write
// that asks again whether the database is still as found, so that instances noticing it at the same
// moment fence once: the first fence changes the latest fence, and the others then find that the
// database moved on and change nothing.
import type { ExpressionBuilder } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { AggregateClass } from './aggregate.ts';
import { fenceStatements, latestFence, type RestoreFence } from './restores.ts';
import type { Database, RestoreFenceRow, RestoreWatchRow } from './tables.ts';

const ROW = 'database';

/** The database's mark as an instance reads it. */
export interface RestoreWatchState {
  /** The database's identity: a database made anew has another. */
  database: string;
  counter: number;
  /** The PostgreSQL timeline last recorded; null before the first or on SQLite. */
  timeline: number | null;
  /** The latest fence's id ('' before any): the restore epoch. */
  epoch: string;
  /** A mark of `tessera backup` is pending: the database is a marked backup, restored and not fenced yet. */
  pending: boolean;
  /** Whether the fence asked about (`knownEpoch`) is in the database ('' always is). */
  knows: boolean;
  /** The instance that bumped the counter last; null before migration 028's first bump. */
  markedBy: string | null;
}

/** What the fence's write asks again, in its transaction, before it fences. */
export interface FenceConditions {
  /** The latest fence as it was read: another fence since means another instance fenced first. */
  epoch: string;
  /** A timeline newer than the one recorded. */
  timeline?: number;
  /** What this instance (or the previous start here) saw: the counter below it, or its fence gone. */
  seen?: { database: string; counter: number; epoch: string; by?: string | undefined };
}

/** A bump of the counter by an instance (RestoreWatchStore.markActivity). */
export interface ActivityMark {
  database: string;
  atLeast: number;
  timeline: number | null;
  now: number;
  /** This instance, recorded as the last to bump. */
  by: string;
}

/** A restore an instance detected, to fence (RestoreWatchStore.fenceDetectedRestore). */
export interface DetectedRestore {
  id: string;
  now: number;
  event: SecurityEvent;
  when: FenceConditions;
  timeline: number | null;
  by: string;
}

/** The fence, if this write made it, and the counter as the write left it. */
export interface DetectedRestoreFence {
  fence: RestoreFence | undefined;
  database: string;
  counter: number;
}

export interface RestoreWatchStore {
  /** The mark, written first with `newDatabase` as identity when the database has none. */
  readRestoreWatch(input: { newDatabase: string; knownEpoch: string; now: number }): Promise<RestoreWatchState>;
  /**
   * Bumps the counter (recording `timeline` when not null) if the database is still `database` with
   * a counter of at least `atLeast`: the new counter, or undefined when the database changed meanwhile.
   */
  markActivity(input: ActivityMark): Promise<number | undefined>;
  /**
   * Fences the database when a backup's mark is pending or `when` still holds, in one write with the
   * bump of the counter (and `timeline` recorded): the fence, if this write made it, and the counter.
   */
  fenceDetectedRestore(input: DetectedRestore): Promise<DetectedRestoreFence>;
  /** PostgreSQL's current timeline; null on SQLite. Throws when the role may not read it. */
  databaseTimeline(): Promise<number | null>;
  /** Records `timeline` as the one the database is on (`tessera restore-finish` fenced it already). */
  recordTimeline(timeline: number): Promise<void>;
}

/** Restores detected: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withRestoreWatch<Base extends AggregateClass>(Base: Base) {
  abstract class RestoreWatch extends Base {
    async readRestoreWatch(input: {
      newDatabase: string;
      knownEpoch: string;
      now: number;
    }): Promise<RestoreWatchState> {
      const { db } = this;
      const read = () => db.selectFrom('restore_watch').selectAll().where('id', '=', ROW).executeTakeFirst();
      let row = await read();
      if (!row) {
        await this.write(
          db
            .insertInto('restore_watch')
            .values({ id: ROW, database: input.newDatabase, counter: 0, timeline: null, marked_at: input.now })
            .onConflict((oc) => oc.column('id').doNothing()),
        );
        row = await read();
        if (!row) throw new Error('restore_watch: the row just written is missing');
      }
      const [latest, pending, known] = await Promise.all([
        latestFence(db).executeTakeFirst(),
        db.selectFrom('restore_fences').select('id').where('fenced_at', 'is', null).limit(1).executeTakeFirst(),
        input.knownEpoch === ''
          ? Promise.resolve({ id: '' })
          : db
              .selectFrom('restore_fences')
              .select('id')
              .where('id', '=', input.knownEpoch)
              .where('fenced_at', 'is not', null)
              .executeTakeFirst(),
      ]);
      return {
        database: row.database,
        counter: Number(row.counter),
        timeline: row.timeline === null ? null : Number(row.timeline),
        epoch: latest?.id ?? '',
        pending: pending !== undefined,
        knows: known !== undefined,
        markedBy: row.marked_by ?? null,
      };
    }

    async markActivity(input: ActivityMark): Promise<number | undefined> {
      const [row] = await this.writeRows<Pick<RestoreWatchRow, 'counter'>>(
        this.db
          .updateTable('restore_watch')
          .set((eb) => ({
            counter: eb('counter', '+', 1),
            marked_at: input.now,
            marked_by: input.by,
            ...(input.timeline === null ? {} : { timeline: input.timeline }),
          }))
          .where('id', '=', ROW)
          .where('database', '=', input.database)
          .where('counter', '>=', input.atLeast)
          .returning('counter'),
      );
      return row ? Number(row.counter) : undefined;
    }

    async recordTimeline(timeline: number): Promise<void> {
      await this.write(this.db.updateTable('restore_watch').set({ timeline }).where('id', '=', ROW));
    }

    async fenceDetectedRestore(input: DetectedRestore): Promise<DetectedRestoreFence> {
      const { db } = this;
      const { when } = input;
      // The conditions, read after the bump below has locked the row (PostgreSQL: another instance's
      // fence, which bumped first, is committed by then; SQLite writes one at a time).
      const still = (eb: ExpressionBuilder<Database, 'restore_watch'>) => {
        const reasons = [];
        if (when.timeline !== undefined)
          reasons.push(eb.and([eb('timeline', 'is not', null), eb('timeline', '<', when.timeline)]));
        if (when.seen) {
          const { seen } = when;
          // The bump came first: a counter below what was seen is now at most equal to it.
          const gone = [eb('counter', '<=', seen.counter)];
          // Or the counter this instance wrote, written again by another (the bump made it one more).
          if (seen.by !== undefined)
            gone.push(
              eb.and([
                eb('counter', '=', seen.counter + 1),
                eb('marked_by', 'is not', null),
                eb('marked_by', '!=', seen.by),
              ]),
            );
          if (seen.epoch !== '')
            gone.push(
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('restore_fences')
                    .select('id')
                    .where('id', '=', seen.epoch)
                    .where('fenced_at', 'is not', null),
                ),
              ),
            );
          reasons.push(eb.and([eb('database', '=', seen.database), eb.or(gone)]));
        }
        return eb.and([
          eb('id', '=', ROW),
          eb(eb.fn.coalesce(latestFence(db), eb.val('')), '=', when.epoch),
          eb.or(reasons),
        ]);
      };
      const rows = await this.writeRows<Partial<Pick<RestoreFenceRow, 'id' | 'taken_at'> & RestoreWatchRow>>(
        db
          .updateTable('restore_watch')
          .set((eb) => ({ counter: eb('counter', '+', 1), marked_at: input.now }))
          .where('id', '=', ROW),
        db
          .insertInto('restore_fences')
          .columns(['id', 'taken_at', 'fenced_at'])
          .expression(
            db
              .selectFrom('restore_watch')
              .select((eb) => [
                eb.val(`mark:${input.id}`).as('id'),
                eb.val(null).as('taken_at'),
                eb.val(null).as('fenced_at'),
              ])
              .where(still),
          ),
        ...fenceStatements(db, input),
        db
          .updateTable('restore_watch')
          .set(
            input.timeline === null
              ? { marked_at: input.now, marked_by: input.by }
              : { timeline: input.timeline, marked_by: input.by },
          )
          .where('id', '=', ROW)
          .returning(['database', 'counter']),
      );
      const fenced = rows.find((row) => row.taken_at !== undefined);
      const watch = rows.find((row) => row.counter !== undefined);
      if (!watch) throw new Error('restore_watch: the row is missing');
      return {
        fence: fenced && {
          id: fenced.id!,
          takenAt: fenced.taken_at === null ? null : Number(fenced.taken_at),
          fencedAt: input.now,
        },
        database: watch.database!,
        counter: Number(watch.counter),
      };
    }
  }
  return RestoreWatch;
}
