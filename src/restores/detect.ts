// Whether a database went back in time without `tessera restore-finish` (docs/backup.md#restores-detected):
// a pure answer over what the database holds now (src/store/restore-watch.ts) and what this instance
// last saw of it (or the previous start here, ../restores/local-mark.ts).
import type { FenceConditions, RestoreWatchState } from '../store/restore-watch.ts';

/**
 * What an instance remembers of the database: its identity, the counter it last got, the fence it
 * knew, and itself as the one that bumped the counter to that value (absent in older marks).
 */
export interface Seen {
  database: string;
  counter: number;
  epoch: string;
  by?: string | undefined;
}

/**
 * - `backup`: a copy `tessera backup` marked, restored and not fenced yet;
 * - `timeline`: PostgreSQL runs on a newer timeline than the one recorded (a point-in-time recovery);
 * - `mark`: the activity mark is below what was seen, or the fence that was the latest is gone.
 */
export type Detected = 'backup' | 'timeline' | 'mark';

export type Verdict =
  /** Nothing went back; `database` is another database than the one seen when `seen` named another. */
  | { kind: 'same' }
  /** Fenced since it was seen (by another instance or `tessera restore-finish`): take its epoch. */
  | { kind: 'fenced'; epoch: string }
  /** Went back: fence it, if `conditions` still hold when the fence is written. */
  | { kind: 'restored'; detected: Detected[]; conditions: FenceConditions };

export function detectRestore(input: {
  state: RestoreWatchState;
  seen: Seen | undefined;
  /** PostgreSQL's timeline now, null when unknown or on SQLite. */
  timeline: number | null;
  /** TESSERA_RESTORE_TIMELINE_FENCE: off where failovers promote standbys. */
  fenceNewTimeline: boolean;
}): Verdict {
  const { state, timeline } = input;
  // A mark of another database (one made anew where this one was) says nothing about this one.
  const seen = input.seen?.database === state.database ? input.seen : undefined;
  const detected: Detected[] = [];
  const conditions: FenceConditions = { epoch: state.epoch };
  if (state.pending) detected.push('backup');
  if (input.fenceNewTimeline && timeline !== null && state.timeline !== null && timeline > state.timeline) {
    detected.push('timeline');
    conditions.timeline = timeline;
  }
  if (seen) {
    const sameEpoch = state.epoch === seen.epoch;
    // Each bump makes a counter no other bump makes: the one this instance made, made by another, is a
    // restore whose counter another instance (which had seen it lower) bumped back up.
    const rewritten =
      state.counter === seen.counter && seen.by !== undefined && state.markedBy !== null && state.markedBy !== seen.by;
    if ((sameEpoch && (state.counter < seen.counter || rewritten)) || (!sameEpoch && !state.knows)) {
      detected.push('mark');
      conditions.seen = seen;
    }
  }
  if (detected.length > 0) return { kind: 'restored', detected, conditions };
  if (seen && state.epoch !== seen.epoch) return { kind: 'fenced', epoch: state.epoch };
  return { kind: 'same' };
}
