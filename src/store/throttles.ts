// Counters of attempts at passwords, secrets and registrations (src/authn/throttle.ts), shared by
// every instance: a key's settled failures and the time of its last one (the count starts again
// once that is older than the window), and its attempts in flight (`pending`, counted while their
// lease `pending_until` lasts). An attempt is admitted before it is checked only if the key's policy
// allows one now, failures and pending together: the upsert's own condition, evaluated by the
// database on the row as it stands (PostgreSQL locks it, SQLite has one writer), so concurrent
// attempts are admitted one after another and none slips past the count. Settling is one update per
// key, on the row as it then stands: nothing is read first and written after.
import { type Compilable, type Selectable, sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import {
  delaySteps,
  type ThrottleCounter,
  type ThrottleOutcome,
  type ThrottlePolicy,
  type ThrottleState,
} from '../authn/throttle.ts';
import type { AggregateClass } from './aggregate.ts';
import type { ThrottleRow } from './tables.ts';

export interface ThrottleStore extends ThrottleCounter {
  getThrottles(keys: string[]): Promise<ThrottleState[]>;
  /**
   * Counts a failure for each key, starting again from one when its last failure is older than
   * `window` seconds: the keys' new states. One write for all of them.
   */
  recordFailures(input: {
    keys: Array<{ key: string; subject: string }>;
    now: number;
    window: number;
  }): Promise<ThrottleState[]>;
  /** Forgets the keys' failures (after a success). */
  clearThrottles(keys: string[]): Promise<void>;
  /** Forgets every key of a username or client (`tessera users unlock`): how many there were. */
  clearThrottlesOf(subject: string, event?: SecurityEvent): Promise<number>;
  /** Every key counted for a username or client (`tessera users show`). */
  getThrottlesOf(subject: string): Promise<ThrottleState[]>;
  /**
   * The usernames locked at `now` under `policy` (their `account:` or `second-factor:` key at the
   * limit, the lock not yet over): the metric tessera_locked_accounts. A device's own lock is no
   * account's.
   */
  countLockedAccounts(now: number, policy: ThrottlePolicy): Promise<number>;
}

const COLUMNS = ['key', 'subject', 'failures', 'last_failure_at', 'pending', 'pending_until'] as const;

const toThrottleState = (row: Selectable<ThrottleRow>): ThrottleState => ({
  key: row.key,
  failures: Number(row.failures),
  lastFailureAt: Number(row.last_failure_at),
  pending: Number(row.pending),
  pendingUntil: Number(row.pending_until),
});

/** The seconds a key must wait after its last failure, for the failures it has: the policy's steps. */
function delayAfterFailures(policy: ThrottlePolicy) {
  const steps = delaySteps(policy).map(
    (step) => sql`when throttles.failures >= ${sql.lit(step.atLeast)} then ${sql.lit(step.seconds)}`,
  );
  return sql<number>`(case ${sql.join(steps, sql` `)} else 0 end)`;
}

/** Whether the key's count is older than the window (it starts again). */
const stale = (now: number, window: number) => sql<boolean>`(throttles.last_failure_at <= ${now - window})`;
/** The key's failures that still count at `now`. */
const liveFailures = (now: number, window: number) =>
  sql<number>`(case when ${stale(now, window)} then 0 else throttles.failures end)`;
/** The key's pending attempts whose lease still runs at `now`. */
const livePending = (now: number) =>
  sql<number>`(case when throttles.pending_until > ${now} then throttles.pending else 0 end)`;
/** One pending attempt fewer (never below none). */
const onePendingLess = sql<number>`(case when throttles.pending > 0 then throttles.pending - 1 else 0 end)`;
/** One failure more, or the first of a new count. */
const oneFailureMore = (now: number, window: number) =>
  sql<number>`(case when ${stale(now, window)} then 1 else throttles.failures + 1 end)`;

type Settled = { key: string; subject: string; window: number; pending: boolean; outcome: ThrottleOutcome };

/** Throttles: the Kysely code, on top of `Base` (the aggregates below, ./kysely-store.ts). */
export function withThrottles<Base extends AggregateClass>(Base: Base) {
  abstract class Throttles extends Base implements ThrottleStore {
    async countAttempts(input: {
      keys: Array<{ key: string; subject: string; policy: ThrottlePolicy; pending: boolean }>;
      now: number;
      lease: number;
    }): Promise<ThrottleState[]> {
      const { now, lease } = input;
      const upserts = byKey(input.keys).map(({ key, subject, policy, pending }) => {
        const failures = liveFailures(now, policy.window);
        const inFlight = livePending(now);
        // A pending attempt is held for its lease; a counted one (a quota's) is a failure at once.
        const values = pending
          ? { key, subject, failures: 0, last_failure_at: 0, pending: 1, pending_until: now + lease }
          : { key, subject, failures: 1, last_failure_at: now };
        const update = pending
          ? { failures, pending: sql<number>`${inFlight} + 1`, pending_until: now + lease }
          : { failures: sql<number>`${failures} + 1`, last_failure_at: now };
        return this.db
          .insertInto('throttles')
          .values(values)
          .onConflict((c) =>
            c
              .column('key')
              .doUpdateSet(update)
              // Only while the key allows one more attempt, each in flight counted as the failure it may
              // become: within the free failures, or past them with none in flight once the wait after
              // the last failure is over or the count stale (an instance's clock a little ahead changes
              // nothing within the free ones). src/authn/throttle-rules.ts `admits` is the same rule.
              .where((eb) =>
                eb.or([
                  eb(sql`${failures} + ${inFlight}`, '<', Math.min(policy.freeFailures, policy.lockAfter)),
                  eb.and([
                    eb(inFlight, '=', 0),
                    eb.or([
                      eb(stale(now, policy.window), '=', sql.lit(true)),
                      eb(sql`throttles.last_failure_at + ${delayAfterFailures(policy)}`, '<=', now),
                    ]),
                  ]),
                ]),
              ),
          )
          .returning(COLUMNS);
      });
      return (await this.writeRows<Selectable<ThrottleRow>>(...upserts)).map(toThrottleState);
    }

    async settleAttempts(input: { keys: Settled[]; now: number }): Promise<ThrottleState[]> {
      const { now } = input;
      const keys = byKey(input.keys);
      const writes = keys.flatMap((k) => this.#settle(k, now));
      if (writes.length === 0) return [];
      // A key left with nothing counted is forgotten, as `clear` did before anything was held pending.
      const empty = this.db
        .deleteFrom('throttles')
        .where(
          'key',
          'in',
          keys.map((k) => k.key),
        )
        .where('failures', '=', 0)
        .where((eb) => eb.or([eb('pending', '=', 0), eb('pending_until', '<=', now)]));
      const rows = await this.writeRows<Selectable<ThrottleRow>>(...writes, empty);
      return rows.filter((row) => row.key !== undefined).map(toThrottleState);
    }

    /** What an outcome does to a key's row: one statement, or none. */
    #settle({ key, subject, window, pending, outcome }: Settled, now: number): Compilable[] {
      const row = this.db.updateTable('throttles').where('key', '=', key);
      if (!pending) {
        // A counted attempt (a quota's): cleared, given back, or kept as it is.
        if (outcome === 'keep') return [];
        const failures = outcome === 'clear' ? 0 : sql<number>`(case when failures > 0 then failures - 1 else 0 end)`;
        return [row.set({ failures }).returning(COLUMNS)];
      }
      if (outcome === 'clear') return [row.set({ failures: 0, pending: onePendingLess }).returning(COLUMNS)];
      if (outcome === 'giveBack') return [row.set({ pending: onePendingLess }).returning(COLUMNS)];
      // A failure: written even if the row went meanwhile (`tessera users unlock`), so that none is lost.
      return [
        this.db
          .insertInto('throttles')
          .values({ key, subject, failures: 1, last_failure_at: now })
          .onConflict((c) =>
            c
              .column('key')
              .doUpdateSet({ failures: oneFailureMore(now, window), last_failure_at: now, pending: onePendingLess }),
          )
          .returning(COLUMNS),
      ];
    }

    async getThrottles(keys: string[]): Promise<ThrottleState[]> {
      if (keys.length === 0) return [];
      const rows = await this.db.selectFrom('throttles').select(COLUMNS).where('key', 'in', keys).execute();
      return rows.map(toThrottleState);
    }

    async recordFailures(input: {
      keys: Array<{ key: string; subject: string }>;
      now: number;
      window: number;
    }): Promise<ThrottleState[]> {
      const { now, window } = input;
      const upserts = byKey(input.keys).map(({ key, subject }) =>
        this.db
          .insertInto('throttles')
          .values({ key, subject, failures: 1, last_failure_at: now })
          .onConflict((c) =>
            c.column('key').doUpdateSet({ failures: oneFailureMore(now, window), last_failure_at: now }),
          )
          .returning(COLUMNS),
      );
      return (await this.writeRows<Selectable<ThrottleRow>>(...upserts)).map(toThrottleState);
    }

    async clearThrottles(keys: string[]): Promise<void> {
      if (keys.length > 0) await this.write(this.db.deleteFrom('throttles').where('key', 'in', keys));
    }

    async clearThrottlesOf(subject: string, event?: SecurityEvent): Promise<number> {
      return this.write(this.db.deleteFrom('throttles').where('subject', '=', subject), ...this.events(event));
    }

    /** The keys of a subject with failures counted (attempts merely in flight are nothing to show). */
    async getThrottlesOf(subject: string): Promise<ThrottleState[]> {
      const rows = await this.db
        .selectFrom('throttles')
        .select(COLUMNS)
        .where('subject', '=', subject)
        .where('failures', '>', 0)
        .orderBy('key')
        .execute();
      return rows.map(toThrottleState);
    }

    async countLockedAccounts(now: number, policy: ThrottlePolicy): Promise<number> {
      // The lock lasts lockSeconds after the last failure, and no count outlives the window (./throttle-rules.ts).
      const since = now - Math.min(policy.lockSeconds, policy.window);
      const row = await this.db
        .selectFrom('throttles')
        .select((eb) => eb.fn.count<number | string>('subject').distinct().as('n'))
        .where('last_failure_at', '>', since)
        .where('failures', '>=', policy.lockAfter)
        .where((eb) => eb.or([eb('key', 'like', 'account:%'), eb('key', 'like', 'second-factor:%')]))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }
  }
  return Throttles;
}

/** Keys in one order whoever writes them, so that two writes locking the same rows never wait for each other. */
function byKey<T extends { key: string }>(keys: T[]): T[] {
  return [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
