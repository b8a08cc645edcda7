// Throttles that count failures (src/store/throttles.ts under src/authn/throttle.ts), on SQLite and
// PostgreSQL, with two stores on one database standing for two instances: attempts in flight are
// held apart from failures, so that right answers sent at once all get through while wrong ones sent
// at once get no more than the allowance checked; a success gives back only its own attempt; a
// pending attempt counts for its lease and no longer; a quota's keys count each attempt at once.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { openDatabase, openStore } from '../../src/store/index.ts';
import type { Database } from '../../src/store/tables.ts';
import type { Store } from '../../src/store/store.ts';
import { LEASE, Throttle, type ThrottleCounter, type ThrottleKey } from '../../src/authn/throttle.ts';
import { withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const POLICY = { freeFailures: 3, lockAfter: 10, lockSeconds: 60, window: 3600 };
const ADDRESS = { ...POLICY, freeFailures: 30, lockAfter: 100 };

const keysOf = (name: string): ThrottleKey[] => [
  { key: `account:${name}`, subject: name, policy: POLICY, onSuccess: 'clear' },
  { key: 'address:192.0.2.1', subject: 'address:192.0.2.1', policy: ADDRESS },
];

/** A check of `right` answers that yields to the event loop, counting checks and how many ran at once. */
function checker() {
  const seen = { checks: 0, running: 0, most: 0 };
  const check = async (right: boolean) => {
    seen.checks++;
    seen.running++;
    seen.most = Math.max(seen.most, seen.running);
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 10));
    seen.running--;
    return right;
  };
  return { seen, check };
}

/** One sign-in through the throttle: `ok`, `failed`, or the status it was refused with. */
async function attempt(
  throttle: Throttle,
  keys: ThrottleKey[],
  right: boolean,
  check: ReturnType<typeof checker>['check'],
) {
  const begun = await throttle.begin(keys, NOW);
  if (begun.refused) return begun.refused.locked ? 'locked' : 'refused';
  if (await check(right)) {
    await begun.succeeded();
    return 'ok';
  }
  await begun.failed();
  return 'failed';
}

const tally = (outcomes: string[]) => {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
};

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`throttles that count failures (${name})`, async () => {
    const db: TestDatabase | undefined = await database();
    const skip = db ? false : `${name} unreachable`;
    let one: Store;
    let two: Store;
    let side: Kysely<Database>;
    before(async () => {
      if (!db) return;
      one = await openStore(db.url);
      await one.migrate();
      // Another instance: its own connections to the same database.
      two = await openStore(db.url, { thread: 'worker' });
      side = openDatabase(db.url);
    });
    after(async () => {
      await side?.destroy();
      await two?.close();
      await one?.close();
      await db?.drop();
    });
    beforeEach(async () => {
      if (db) await side.deleteFrom('throttles').execute();
    });

    it('attempts at once are admitted as pending only up to the free failures', { skip }, async () => {
      const keys = [{ key: 'account:race', subject: 'race', policy: POLICY, pending: true }];
      const admitted = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).countAttempts({ keys, now: NOW, lease: LEASE })),
      );
      assert.equal(admitted.filter((states) => states.length === 1).length, 3, 'three at once, no more');
      assert.deepEqual(
        admitted
          .flat()
          .map((s) => [s.failures, s.pending])
          .sort(),
        [
          [0, 1],
          [0, 2],
          [0, 3],
        ],
        'held as pending, not counted as failures',
      );
      // A success gives back its own attempt and clears the failures, leaving the others in flight.
      const settle = (outcome: 'clear' | 'keep' | 'giveBack') =>
        one.settleAttempts({
          keys: [{ key: 'account:race', subject: 'race', window: 3600, pending: true, outcome }],
          now: NOW,
        });
      assert.deepEqual(
        (await settle('clear')).map((s) => [s.failures, s.pending]),
        [[0, 2]],
      );
      assert.equal((await one.countAttempts({ keys, now: NOW, lease: LEASE }))[0]?.pending, 3, 'room for one');
      // Failures take the place of their pending attempts: the three are failures now.
      for (let i = 0; i < 3; i++) await settle('keep');
      assert.deepEqual(
        (await one.getThrottles(['account:race'])).map((s) => [s.failures, s.pending, s.lastFailureAt]),
        [[3, 0, NOW]],
      );
      // Past the free failures: one at a time, once the delay is over.
      assert.deepEqual(await one.countAttempts({ keys, now: NOW, lease: LEASE }), []);
      assert.equal((await one.countAttempts({ keys, now: NOW + 1, lease: LEASE }))[0]?.pending, 1);
      assert.deepEqual(await two.countAttempts({ keys, now: NOW + 1, lease: LEASE }), [], 'one in flight');
      // A pending attempt counts for its lease and no longer (its instance stopped mid-check).
      assert.equal((await two.countAttempts({ keys, now: NOW + 1 + LEASE, lease: LEASE }))[0]?.pending, 1);
      // A stale count starts again, whatever it was.
      const later = await one.countAttempts({ keys, now: NOW + 7200, lease: LEASE });
      assert.deepEqual(
        later.map((s) => [s.failures, s.pending]),
        [[0, 1]],
      );
    });

    it("a quota's keys count each attempt as it is admitted", { skip }, async () => {
      const keys = [{ key: 'register:192.0.2.2', subject: 'register', policy: POLICY, pending: false }];
      const admitted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).countAttempts({ keys, now: NOW, lease: LEASE })),
      );
      assert.equal(admitted.flat().length, 3);
      assert.deepEqual(
        (await one.getThrottles(['register:192.0.2.2'])).map((s) => [s.failures, s.pending]),
        [[3, 0]],
      );
    });

    it('20 right answers at once all get in, 60 wrong ones at once get the allowance checked', { skip }, async () => {
      // Across two instances, each with its own throttle over its own store.
      const throttles = [new Throttle(one), new Throttle(two)];
      const right = checker();
      const wrong = checker();
      const [alice, mallory] = await Promise.all([
        Promise.all(
          Array.from({ length: 20 }, (_, i) => attempt(throttles[i % 2]!, keysOf('alice'), true, right.check)),
        ),
        Promise.all(
          Array.from({ length: 60 }, (_, i) => attempt(throttles[i % 2]!, keysOf('bob'), false, wrong.check)),
        ),
      ]);
      assert.deepEqual(tally(alice), { ok: 20 }, 'no right answer refused');
      assert.ok(right.seen.most <= POLICY.freeFailures, `at most the allowance in flight (${right.seen.most})`);
      assert.deepEqual(tally(mallory), { failed: 3, refused: 57 });
      assert.equal(wrong.seen.checks, 3, 'three wrong answers checked, no more');
      const states = await one.getThrottles(['account:alice', 'account:bob', 'address:192.0.2.1']);
      assert.deepEqual(
        states.map((s) => [s.key, s.failures, s.pending]).sort(),
        [
          ['account:bob', 3, 0],
          ['address:192.0.2.1', 3, 0],
        ],
        "alice's successes cleared her key; the address counts bob's three failures and nothing else",
      );
    });

    it('right answers wait for those in flight, but not for failures: those refuse at once', { skip }, async () => {
      const throttle = new Throttle(one);
      const wrong = checker();
      // Three wrong ones in flight, then the right one: it waits, and is refused once they have failed.
      const guesses = Array.from({ length: 3 }, () => throttle.begin(keysOf('carol'), NOW));
      const admitted = await Promise.all(guesses);
      const right = throttle.begin(keysOf('carol'), NOW);
      let answered = false;
      void right.then(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(answered, false, 'waiting while three are in flight');
      for (const begun of admitted) {
        assert.ok(!begun.refused);
        await wrong.check(false);
        await begun.failed();
      }
      const refused = await right;
      assert.deepEqual(refused.refused, { key: 'account:carol', locked: false, retryAfter: 1 });
    });

    it(
      'an attempt that finds no room within its wait is refused as a delay, having counted nothing',
      { skip },
      async () => {
        const held = await Promise.all(Array.from({ length: 3 }, () => new Throttle(one).begin(keysOf('gina'), NOW)));
        assert.ok(held.every((begun) => !begun.refused));
        const refused = await new Throttle(two, { wait: 200 }).begin(keysOf('gina'), NOW);
        assert.deepEqual(refused.refused, { key: 'account:gina', locked: false, retryAfter: 1 });
        const states = await one.getThrottles(['account:gina', 'address:192.0.2.1']);
        assert.deepEqual(states.map((s) => [s.key, s.pending]).sort(), [
          ['account:gina', 3],
          ['address:192.0.2.1', 3],
        ]);
      },
    );

    it('unlocking while an attempt is in flight loses none of its failure', { skip }, async () => {
      const throttle = new Throttle(one);
      const keys = keysOf('dave');
      for (let i = 0; i < 9; i++) {
        const begun = await throttle.begin(keys, NOW + 100 * i);
        assert.ok(!begun.refused);
        await begun.failed();
      }
      const last = await throttle.begin(keys, NOW + 1000);
      assert.ok(!last.refused);
      await one.clearThrottlesOf('dave');
      assert.deepEqual(await last.failed(), [], 'counted from one again: no lock');
      assert.deepEqual(
        (await one.getThrottlesOf('dave')).map((s) => [s.key, s.failures, s.pending]),
        [['account:dave', 1, 0]],
      );
    });

    it('housekeeping keeps a key while attempts are in flight on it', { skip }, async () => {
      const keys = [{ key: 'account:fred', subject: 'fred', policy: POLICY, pending: true }];
      await one.countAttempts({ keys, now: NOW, lease: LEASE });
      const purge = (now: number) =>
        one.purgeExpired({
          now,
          codeTtl: 60,
          codeGrace: 600,
          accessTokenTtl: 3600,
          eventRetention: 86_400,
          throttleHorizon: 3600,
        });
      await purge(NOW + 1);
      assert.equal((await one.getThrottles(['account:fred']))[0]?.pending, 1);
      await purge(NOW + LEASE);
      assert.deepEqual(await one.getThrottles(['account:fred']), []);
    });

    it('a failed settle is written again once the database answers', { skip }, async () => {
      let down = true;
      const flaky: ThrottleCounter = {
        countAttempts: (input) => one.countAttempts(input),
        getThrottles: (keys) => one.getThrottles(keys),
        settleAttempts: (input) => (down ? Promise.reject(new Error('connection lost')) : one.settleAttempts(input)),
      };
      const begun = await new Throttle(flaky).begin(keysOf('erin'), NOW);
      assert.ok(!begun.refused);
      await assert.rejects(begun.succeeded(), /connection lost/);
      assert.equal((await one.getThrottles(['account:erin']))[0]?.pending, 1);
      down = false;
      for (let waited = 0; (await one.getThrottles(['account:erin'])).length > 0; waited += 50) {
        assert.ok(waited < 5000, 'settled within a few seconds');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
  });
}
