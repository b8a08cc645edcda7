// detectRestore (src/restores/detect.ts): what the database holds now against what was seen of it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { detectRestore } from '../../src/restores/detect.ts';
import type { RestoreWatchState } from '../../src/store/restore-watch.ts';

const state = (over: Partial<RestoreWatchState> = {}): RestoreWatchState => ({
  database: 'db',
  counter: 10,
  timeline: 1,
  epoch: 'f1',
  pending: false,
  knows: true,
  markedBy: null,
  ...over,
});
const seen = { database: 'db', counter: 10, epoch: 'f1' };
const detect = (s: RestoreWatchState, options: { seen?: typeof seen; timeline?: number | null; on?: boolean } = {}) =>
  detectRestore({
    state: s,
    seen: 'seen' in options ? options.seen : seen,
    timeline: options.timeline === undefined ? 1 : options.timeline,
    fenceNewTimeline: options.on ?? true,
  });

it('finds nothing in a database as it was seen, or ahead of it', () => {
  assert.deepEqual(detect(state()), { kind: 'same' });
  assert.deepEqual(detect(state({ counter: 12 })), { kind: 'same' });
  assert.deepEqual(detect(state({ counter: 0 }), { seen: undefined }), { kind: 'same' }, 'nothing seen yet');
  assert.deepEqual(detect(state({ counter: 0, database: 'new' })), { kind: 'same' }, 'another database');
});

it('finds a mark behind what was seen, or the fence seen gone', () => {
  const behind = detect(state({ counter: 9 }));
  assert.equal(behind.kind, 'restored');
  assert.deepEqual(behind.kind === 'restored' && behind.detected, ['mark']);
  assert.deepEqual(behind.kind === 'restored' && behind.conditions, { epoch: 'f1', seen });
  const gone = detect(state({ epoch: '', counter: 50, knows: false }));
  assert.deepEqual(gone.kind === 'restored' && gone.detected, ['mark']);
});

it('finds the counter this instance wrote written again by another: a restore another instance bumped back up', () => {
  const mine = { ...seen, by: 'instance-a' };
  const rewritten = detect(state({ markedBy: 'instance-b' }), { seen: mine });
  assert.deepEqual(rewritten.kind === 'restored' && rewritten.detected, ['mark']);
  // Its own bump, or a mark from before instances said who bumped: nothing.
  assert.deepEqual(detect(state({ markedBy: 'instance-a' }), { seen: mine }), { kind: 'same' });
  assert.deepEqual(detect(state({ markedBy: null }), { seen: mine }), { kind: 'same' });
  assert.deepEqual(detect(state({ markedBy: 'instance-b' })), { kind: 'same' }, 'seen without by');
  // Moved on by another since: the usual.
  assert.deepEqual(detect(state({ counter: 11, markedBy: 'instance-b' }), { seen: mine }), { kind: 'same' });
});

it('takes up a fence made since, when the fence seen is still there', () => {
  assert.deepEqual(detect(state({ epoch: 'f2', counter: 11 })), { kind: 'fenced', epoch: 'f2' });
});

it('finds a newer timeline, unless turned off; a lower one is another cluster', () => {
  const newer = detect(state(), { timeline: 2 });
  assert.deepEqual(newer.kind === 'restored' && newer.detected, ['timeline']);
  assert.deepEqual(newer.kind === 'restored' && newer.conditions, { epoch: 'f1', timeline: 2 });
  assert.deepEqual(detect(state(), { timeline: 2, on: false }), { kind: 'same' });
  assert.deepEqual(detect(state({ timeline: 3 }), { timeline: 1 }), { kind: 'same' });
  assert.deepEqual(detect(state({ timeline: null }), { timeline: 4 }), { kind: 'same' }, 'none recorded yet');
  assert.deepEqual(detect(state(), { timeline: null }), { kind: 'same' }, 'unknown (SQLite, or not readable)');
});

it('names a marked backup, with whatever else it finds', () => {
  const both = detect(state({ pending: true, counter: 3 }), { timeline: 2 });
  assert.deepEqual(both.kind === 'restored' && both.detected, ['backup', 'timeline', 'mark']);
});
