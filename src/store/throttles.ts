// Counters of attempts at passwords, secrets and registrations (src/oauth/throttle.ts), shared by
// every instance: a key's failures and the time of its last one, counted by one upsert per key that
// starts again from one once the last failure is older than the window. An attempt is counted before
// it is checked, only if the key's policy allows one now: the upsert's own condition, evaluated by
// the database on the row as it stands (PostgreSQL locks it, SQLite has one writer), so concurrent
// attempts are counted one after another and none slips past the count.
import { sql } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { delaySteps, type ThrottleCounter, type ThrottlePolicy, type ThrottleState } from '../authn/throttle.ts';
import { Aggregate } from './aggregate.ts';
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
}

const toThrottleState = (row: ThrottleRow): ThrottleState => ({
  key: row.key,
  failures: Number(row.failures),
  lastFailureAt: Number(row.last_failure_at),
});

/** The seconds a key must wait after its last failure, for the failures it has: the policy's steps. */
function delayAfterFailures(policy: ThrottlePolicy) {
  const steps = delaySteps(policy).map(
    (step) => sql`when throttles.failures >= ${sql.lit(step.atLeast)} then ${sql.lit(step.seconds)}`,
  );
  return sql<number>`(case ${sql.join(steps, sql` `)} else 0 end)`;
}

export class Throttles extends Aggregate implements ThrottleStore {
  async countAttempts(input: {
    keys: Array<{ key: string; subject: string; policy: ThrottlePolicy }>;
    now: number;
  }): Promise<ThrottleState[]> {
    const { now } = input;
    // In one order whoever asks, so that two writes locking the same keys never wait for each other.
    const keys = [...input.keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const upserts = keys.map(({ key, subject, policy }) =>
      this.db
        .insertInto('throttles')
        .values({ key, subject, failures: 1, last_failure_at: now })
        .onConflict((c) =>
          c
            .column('key')
            .doUpdateSet((eb) => ({
              failures: eb
                .case()
                .when('throttles.last_failure_at', '<=', now - policy.window)
                .then(1)
                .else(eb('throttles.failures', '+', 1))
                .end(),
              last_failure_at: now,
            }))
            // Only while the key allows an attempt: its failures are still free, its count is stale,
            // or its wait is over. (Free failures allow one whatever the time of the last: another
            // instance's clock may be a little ahead.)
            .where((eb) =>
              eb.or([
                eb('throttles.failures', '<', Math.min(policy.freeFailures, policy.lockAfter)),
                eb('throttles.last_failure_at', '<=', now - policy.window),
                eb(sql`throttles.last_failure_at + ${delayAfterFailures(policy)}`, '<=', now),
              ]),
            ),
        )
        .returning(['key', 'subject', 'failures', 'last_failure_at']),
    );
    return (await this.writeRows<ThrottleRow>(...upserts)).map(toThrottleState);
  }

  async settleAttempts(input: { clear: string[]; giveBack: string[] }): Promise<void> {
    const writes = [];
    if (input.clear.length > 0) writes.push(this.db.deleteFrom('throttles').where('key', 'in', input.clear));
    if (input.giveBack.length > 0) {
      const taken = this.db
        .updateTable('throttles')
        .set((eb) => ({ failures: eb('failures', '-', 1) }))
        .where('key', 'in', input.giveBack)
        .where('failures', '>', 0);
      writes.push(taken);
    }
    if (writes.length > 0) await this.write(...writes);
  }

  async getThrottles(keys: string[]): Promise<ThrottleState[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.selectFrom('throttles').selectAll().where('key', 'in', keys).execute();
    return rows.map(toThrottleState);
  }

  async recordFailures(input: {
    keys: Array<{ key: string; subject: string }>;
    now: number;
    window: number;
  }): Promise<ThrottleState[]> {
    return (await this.writeRows<ThrottleRow>(...this.#countFailures(input))).map(toThrottleState);
  }

  async clearThrottles(keys: string[]): Promise<void> {
    if (keys.length > 0) await this.write(this.db.deleteFrom('throttles').where('key', 'in', keys));
  }

  async clearThrottlesOf(subject: string, event?: SecurityEvent): Promise<number> {
    return this.write(this.db.deleteFrom('throttles').where('subject', '=', subject), ...this.events(event));
  }

  async getThrottlesOf(subject: string): Promise<ThrottleState[]> {
    const rows = await this.db
      .selectFrom('throttles')
      .selectAll()
      .where('subject', '=', subject)
      .orderBy('key')
      .execute();
    return rows.map(toThrottleState);
  }

  /** One upsert per key, each returning the key's new count: to run together, in one write. */
  #countFailures(input: { keys: Array<{ key: string; subject: string }>; now: number; window: number }) {
    const { now } = input;
    return input.keys.map(({ key, subject }) =>
      this.db
        .insertInto('throttles')
        .values({ key, subject, failures: 1, last_failure_at: now })
        .onConflict((c) =>
          c.column('key').doUpdateSet((eb) => ({
            failures: eb
              .case()
              .when('throttles.last_failure_at', '<=', now - input.window)
              .then(1)
              .else(eb('throttles.failures', '+', 1))
              .end(),
            last_failure_at: now,
          })),
        )
        .returning(['key', 'subject', 'failures', 'last_failure_at']),
    );
  }
}
