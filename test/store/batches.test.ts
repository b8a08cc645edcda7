// PostgreSQL's statement batches (src/store/postgres/batches.ts), against a statement that records what it
// was sent: how batches form, that one key never shares a batch, and that a failing call fails alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatementBatches } from '../../src/store/postgres/batches.ts';

interface Call {
  key: string;
  wins?: boolean;
  bad?: boolean;
}

/** A statement over an in-memory set of keys already taken: the first call per key wins. */
function recording(options: { lanes?: number; maxBatch?: number } = {}) {
  const sent: string[][] = [];
  const taken = new Set<string>();
  let release: () => void = () => {};
  let gate = Promise.resolve();
  const batches = new StatementBatches<Call, string>({
    ...options,
    key: (call) => call.key,
    statement: async (calls) => {
      sent.push(calls.map((c) => c.key));
      await gate;
      await new Promise((resolve) => setImmediate(resolve));
      if (calls.some((c) => c.bad)) throw new Error('statement refused');
      const won = new Map<string, string>();
      for (const call of calls) {
        if (call.wins === false || taken.has(call.key)) continue;
        taken.add(call.key);
        won.set(call.key, `won ${call.key}`);
      }
      return won;
    },
  });
  return {
    batches,
    sent,
    hold() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
  };
}

describe('statement batches', () => {
  it('a call alone goes at once; calls arriving while a batch is in flight go together as the next', async () => {
    const r = recording({ lanes: 1 });
    const first = r.batches.run({ key: 'a' });
    const rest = ['b', 'c', 'd'].map((key) => r.batches.run({ key }));
    assert.deepEqual(await Promise.all([first, ...rest]), ['won a', 'won b', 'won c', 'won d']);
    assert.deepEqual(r.sent, [['a'], ['b', 'c', 'd']]);
  });

  it('each call hears its own outcome: undefined when its row did not match', async () => {
    const r = recording();
    const results = await Promise.all([
      r.batches.run({ key: 'a' }),
      r.batches.run({ key: 'b', wins: false }),
      r.batches.run({ key: 'c' }),
      r.batches.run({ key: 'd', wins: false }),
    ]);
    assert.deepEqual(results, ['won a', undefined, 'won c', undefined]);
  });

  it("two calls with one key are never in flight together: the later one sees the earlier one's outcome", async () => {
    const one = recording({ lanes: 1 });
    one.hold();
    const calls = ['x', 'y', 'x', 'x', 'y'].map((key) => one.batches.run({ key }));
    one.release();
    assert.deepEqual(await Promise.all(calls), ['won x', 'won y', undefined, undefined, undefined]);
    assert.deepEqual(one.sent, [['x'], ['x', 'y'], ['x', 'y']]);

    const two = recording({ lanes: 2 });
    two.hold();
    const both = ['x', 'x', 'y', 'x'].map((key) => two.batches.run({ key }));
    // The second x waits although a lane was free; y takes it.
    assert.deepEqual(two.sent, [['x'], ['y']]);
    two.release();
    assert.deepEqual(await Promise.all(both), ['won x', undefined, 'won y', undefined]);
    assert.deepEqual(two.sent, [['x'], ['y'], ['x'], ['x']]);
  });

  it('a batch goes in the order of its keys', async () => {
    const r = recording({ lanes: 1 });
    r.hold();
    const calls = ['m', 'c', 'x', 'a'].map((key) => r.batches.run({ key }));
    r.release();
    await Promise.all(calls);
    assert.deepEqual(r.sent, [['m'], ['a', 'c', 'x']]);
  });

  it('a batch whose statement fails runs each call alone: only the bad one fails', async () => {
    const r = recording({ lanes: 1 });
    const results = await Promise.allSettled([
      r.batches.run({ key: 'a' }),
      r.batches.run({ key: 'b' }),
      r.batches.run({ key: 'c', bad: true }),
      r.batches.run({ key: 'd' }),
    ]);
    assert.deepEqual(
      results.map((s) => s.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      results.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      ['won a', 'won b', 'statement refused', 'won d'],
    );
    assert.deepEqual(r.sent, [['a'], ['b', 'c', 'd'], ['b'], ['c'], ['d']]);
    // Later calls still share statements.
    assert.deepEqual(
      await Promise.all([r.batches.run({ key: 'e' }), r.batches.run({ key: 'f' }), r.batches.run({ key: 'g' })]),
      ['won e', 'won f', 'won g'],
    );
    assert.ok(r.sent.slice(5).length < 3, JSON.stringify(r.sent.slice(5)));
  });

  it('at most `lanes` batches are in flight, each at most `maxBatch` calls', async () => {
    const r = recording({ lanes: 2, maxBatch: 3 });
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const results = await Promise.all(keys.map((key) => r.batches.run({ key })));
    assert.deepEqual(
      results,
      keys.map((k) => `won ${k}`),
    );
    assert.deepEqual(r.sent, [['k0'], ['k1'], ['k2', 'k3', 'k4'], ['k5', 'k6', 'k7'], ['k8', 'k9']]);
    // Lanes default to 2.
    const byDefault = recording();
    byDefault.hold();
    const calls = ['a', 'b', 'c', 'd'].map((key) => byDefault.batches.run({ key }));
    byDefault.release();
    await Promise.all(calls);
    assert.deepEqual(byDefault.sent, [['a'], ['b'], ['c', 'd']]);
  });
});
