// Counters of failed sign-ins and client authentications (src/oauth/throttle.ts), shared by every
// instance: a key's failures and the time of its last one, counted by one upsert per key that
// starts again from one once the last failure is older than the window.
import type { SecurityEvent } from '../events/index.ts';
import type { ThrottleState } from '../oauth/throttle.ts';
import { Aggregate } from './aggregate.ts';
import type { ThrottleRow } from './tables.ts';

export interface ThrottleStore {
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
}

const toThrottleState = (row: ThrottleRow): ThrottleState => ({
  key: row.key,
  failures: Number(row.failures),
  lastFailureAt: Number(row.last_failure_at),
});

export class Throttles extends Aggregate implements ThrottleStore {
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
