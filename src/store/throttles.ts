// The throttles table (src/oauth/throttle.ts): a key's failures and the time of its last one, counted
// by one upsert per key that starts again from one once the last failure is older than the window.
import type { Kysely } from 'kysely';
import type { ThrottleState } from '../oauth/throttle.ts';
import type { Database, ThrottleRow } from './types.ts';

export const toThrottleState = (row: ThrottleRow): ThrottleState => ({
  key: row.key,
  failures: Number(row.failures),
  lastFailureAt: Number(row.last_failure_at),
});

/** One upsert per key, each returning the key's new count: to run together, in one write. */
export function countFailures(
  db: Kysely<Database>,
  input: { keys: Array<{ key: string; subject: string }>; now: number; window: number },
) {
  const { now } = input;
  return input.keys.map(({ key, subject }) =>
    db
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
