// Online guessing, throttled (RFC 6749 §10.10, RFC 6819 §4.4.3.6, NIST SP 800-63B §5.2.2): attempts at
// a password, a code or a secret are counted per key (an account, a device, a client at an address,
// an address), in the database so that every instance shares them. Past a number of free failures
// each attempt must wait for a delay that doubles with every further failure; past a limit the key
// is locked. Counts start again after a quiet window.
//
// What is counted is failures, and no more of them can happen than the policy allows: an attempt is
// ADMITTED before the password, code or secret is checked, in one conditional write per key
// (ThrottleStore.countAttempts: an upsert whose WHERE is the policy), which holds it as pending while
// it is checked. A key admits an attempt only while its failures and its pending attempts together
// are within what the policy allows now, since every pending attempt may turn out a failure: sixty
// guesses sent at once are admitted one after another by the database, on SQLite and PostgreSQL
// alike and across instances, and only the allowance is ever checked. Its outcome settles it: a
// success takes its pending attempt back, a failure turns it into a failure. An attempt turned away
// only because others are in flight is not refused: it waits for them (while they make progress,
// up to the lease) and tries again, so twenty right passwords sent at once all get in; one turned away by failures is
// refused at once, unchecked (429 with Retry-After). Pending attempts count for a lease (LEASE): an
// instance that stops mid-check does not hold the key longer.
//
//   const attempt = await throttle.begin([accountKey, addressKey], now);
//   if (attempt.refused) return tooMany(attempt.refused);   // 429, Retry-After: nothing was checked
//   if (await check(secret)) await attempt.succeeded();       // e.g. the account's count cleared
//   else await attempt.failed();                              // a failure counted
//
// Each key says what a success and a failure do to its count: `clear` it (an account or a device: the
// right password ends its run of failures), `giveBack` the attempt (an address: many people share
// one, and their successes are not failures), or `keep` it. A key whose successes are kept counts
// requests rather than failures (registrations, mails asked for: a quota, nothing to be right about):
// each is counted as it is admitted, whatever becomes of it. A TOTP, recovery-code or reset step is
// the same three lines with keys of its own.
//
// Keys: `account:<username>` (any username, existing or not, so that throttling says nothing of which
// exist), `device:<id>:<username>` when the browser signed in as that user before (a device cookie,
// ../http/browser.ts: an attacker elsewhere does not lock the user out of it), `address:<address>`,
// `client:<client_id>@<address>` and `client-address:<address>` (./client-auth/throttle.ts),
// `register:<address>`, and the user codes typed on the device verification page,
// `device-user:<username>` and `user-code:<code>` (../oauth/device/verification.ts). An address is an
// IPv4 address or an IPv6 /64 (addressKey: one subscriber's network, which hands its holder 2^64
// addresses). Addresses get ten times an account's allowance: many people share one (a NAT, an
// office).
import { setTimeout as sleep } from 'node:timers/promises';
import type { SignInFailureReason } from './failures.ts';
import {
  addressKey,
  addressPolicy,
  admits,
  refusal,
  type Refusal,
  type ThrottlePolicy,
  type ThrottleState,
} from './throttle-rules.ts';

export {
  addressKey,
  addressPolicy,
  blockedUntil,
  delaySteps,
  refusal,
  type Refusal,
  type ThrottlePolicy,
  type ThrottleState,
} from './throttle-rules.ts';

/** Seconds a pending attempt counts for: far longer than any check, short enough to outlive a crash. */
export const LEASE = 30;
/**
 * Milliseconds an attempt waits for those in flight while the key shows no progress (none of them
 * settled, none admitted) before it is refused after all; however they progress, never beyond the lease.
 */
const WAIT = 10_000;

/** What a success or a failure does to a key's count. */
export type ThrottleOutcome = 'clear' | 'giveBack' | 'keep';

export interface ThrottleKey {
  key: string;
  /** The username or client the key counts for, so that `tessera users unlock` finds its keys. */
  subject: string;
  policy: ThrottlePolicy;
  /** Default: giveBack. `keep`: the key counts every attempt (a quota), as it is admitted. */
  onSuccess?: ThrottleOutcome;
  /** Default: keep. */
  onFailure?: ThrottleOutcome;
}

/**
 * The key a sign-in counts beside its user's: the source address (`address:<address>`), under the
 * address policy (ten times the user's allowance), for passwords and second-factor codes alike.
 */
export function signInAddressKey(ip: string | null, policy: ThrottlePolicy): ThrottleKey {
  const address = `address:${addressKey(ip)}`;
  return { key: address, subject: address, policy: addressPolicy(policy) };
}

/** What the throttle needs of the database (../store/throttles.ts). */
export interface ThrottleCounter {
  /**
   * Admits an attempt for each key that allows one at `now` under its policy, each in one
   * conditional upsert, all in one write: held as pending for `lease` seconds (`pending`), or
   * counted at once. The new states of the keys admitted; a key missing from the answer refused it.
   */
  countAttempts(input: {
    keys: Array<{ key: string; subject: string; policy: ThrottlePolicy; pending: boolean }>;
    now: number;
    lease: number;
  }): Promise<ThrottleState[]>;
  getThrottles(keys: string[]): Promise<ThrottleState[]>;
  /** Writes what each key's outcome does to an attempt it admitted, in one write: the keys' new states. */
  settleAttempts(input: {
    keys: Array<{ key: string; subject: string; window: number; pending: boolean; outcome: ThrottleOutcome }>;
    now: number;
  }): Promise<ThrottleState[]>;
}

/** An attempt admitted: what its outcome does to the counts. */
export interface Attempt {
  refused?: undefined;
  /** The keys' states with this attempt admitted. */
  counted: ThrottleState[];
  succeeded(): Promise<void>;
  /** The keys this failure locked (their count reached the limit with it). */
  failed(): Promise<string[]>;
  /** The keys' states once the outcome is written. */
  settled: ThrottleState[];
}

/** Attempts of this process waiting for room on a key, oldest first: woken when one on the key settles. */
const waiting = new Map<string, Set<() => void>>();

/** Resolves after `ms`, or sooner when an attempt on one of `keys` settles in this process. */
function pauseOn(keys: string[], ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const key of keys) {
        const set = waiting.get(key);
        set?.delete(done);
        if (set?.size === 0) waiting.delete(key);
      }
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const key of keys) waiting.set(key, (waiting.get(key) ?? new Set()).add(done));
  });
}

/**
 * Wakes those waiting on the keys: the oldest on each when an attempt gave its room back, all of
 * them after a failure (which may refuse them now). Other instances' waiters find out by looking.
 */
function wake(keys: string[], everyone: boolean): void {
  for (const key of keys) {
    const set = waiting.get(key);
    if (!set) continue;
    for (const done of everyone ? [...set] : [...set].slice(0, 1)) done();
  }
}

/** Whether a key holds its attempts as pending until their outcome (rather than counting each at once). */
const pends = (key: ThrottleKey) => (key.onSuccess ?? 'giveBack') !== 'keep';

export class Throttle {
  readonly #store: ThrottleCounter;
  readonly #wait: number;

  constructor(store: ThrottleCounter, options: { wait?: number } = {}) {
    this.#store = store;
    this.#wait = options.wait ?? WAIT;
  }

  /**
   * Admits the attempt on every key before anything is checked, waiting for attempts in flight when
   * they alone stand in its way, or refuses it having counted nothing.
   */
  async begin(keys: ThrottleKey[], now: number): Promise<Attempt | { refused: Refusal }> {
    // The attempt's time is `now` throughout (the caller's clock, injected in tests): its wait is short.
    const started = Date.now();
    const admit = keys.map((k) => ({ key: k.key, subject: k.subject, policy: k.policy, pending: pends(k) }));
    const names = keys.map((k) => k.key);
    /** Why the keys refuse: their failures (a refusal), or attempts in flight (no room). */
    const why = async () => {
      const states = await this.#store.getThrottles(names);
      const checks = keys.map((k) => ({ state: states.find((s) => s.key === k.key), policy: k.policy }));
      const full = checks.find((c) => !admits(c.state, c.policy, now))?.state?.key;
      const seen = states.map((s) => `${s.key} ${s.failures} ${s.pending} ${s.pendingUntil}`).join();
      return { failures: refusal(checks, now), full, seen };
    };
    let pause = 20;
    for (;;) {
      const counted = await this.#store.countAttempts({ keys: admit, now, lease: LEASE });
      if (counted.length === keys.length) return this.#attempt(keys, counted, now);
      // Those admitted are given back: the attempt is not made (yet).
      const taken = keys.filter((k) => counted.some((s) => s.key === k.key));
      if (taken.length > 0) await this.#settle(taken, now, () => 'giveBack');
      // Refused by failures: at once, nothing checked. Only by attempts in flight: it waits for room
      // (woken when one settles here, looking after a jittered, growing pause otherwise, so that the
      // waiting do not crowd the database), then tries the write again.
      let state = await why();
      // Room already: the write lost a race with another attempt's; again after a pause.
      if (!state.failures && state.full === undefined) await pauseOn(names, pause);
      let progress = { seen: state.seen, at: Date.now() };
      while (!state.failures && state.full !== undefined) {
        if (Date.now() - progress.at + pause > this.#wait || Date.now() - started > LEASE * 1000) {
          // Those in flight are stuck (their instance gone?): refused for the shortest wait, as a delay.
          return { refused: { locked: false, retryAfter: 1, key: state.full } };
        }
        await pauseOn(names, pause * (0.5 + Math.random()));
        pause = Math.min(pause * 2, 250);
        state = await why();
        if (state.seen !== progress.seen) progress = { seen: state.seen, at: Date.now() };
      }
      if (state.failures) return { refused: state.failures };
    }
  }

  #attempt(keys: ThrottleKey[], counted: ThrottleState[], at: number): Attempt {
    const attempt: Attempt = {
      counted,
      settled: counted,
      succeeded: async () => {
        attempt.settled = await this.#settle(keys, at, (k) => k.onSuccess ?? 'giveBack');
      },
      failed: async () => {
        const settled = await this.#settle(keys, at, (k) => k.onFailure ?? 'keep');
        attempt.settled = settled;
        return keys
          .filter((k) => (k.onFailure ?? 'keep') === 'keep')
          .filter(
            (k) =>
              (settled.find((s) => s.key === k.key) ?? counted.find((s) => s.key === k.key))?.failures ===
              k.policy.lockAfter,
          )
          .map((k) => k.key);
      },
    };
    return attempt;
  }

  /**
   * Writes the outcome for each key (nothing for a counted key's kept attempt). Should the write
   * fail (the database gone a moment), it is tried again in the background until the lease would
   * have ended, so that a pending attempt does not hold its key longer than it must.
   */
  async #settle(keys: ThrottleKey[], at: number, outcome: (k: ThrottleKey) => ThrottleOutcome) {
    const input = {
      keys: keys
        .map((k) => ({
          key: k.key,
          subject: k.subject,
          window: k.policy.window,
          pending: pends(k),
          outcome: outcome(k),
        }))
        .filter((k) => k.pending || k.outcome !== 'keep'),
      now: at,
    };
    if (input.keys.length === 0) return [];
    try {
      const settled = await this.#store.settleAttempts(input);
      const keys = input.keys.filter((k) => k.pending);
      wake(
        keys.map((k) => k.key),
        keys.some((k) => k.outcome === 'keep'),
      );
      return settled;
    } catch (err) {
      void this.#settleLater(input, Date.now() + LEASE * 1000);
      throw err;
    }
  }

  async #settleLater(input: Parameters<ThrottleCounter['settleAttempts']>[0], until: number): Promise<void> {
    for (let pause = 500; Date.now() + pause < until; pause *= 2) {
      await sleep(pause, undefined, { ref: false });
      try {
        await this.#store.settleAttempts(input);
        return;
      } catch {
        // Still unreachable: again after a longer pause, or the lease ends it.
      }
    }
  }
}

/** What sign-ins and client authentications report to the metrics. */
export interface ThrottleObserver {
  signInFailed(reason: SignInFailureReason): void;
  signInRefused(locked: boolean): void;
  clientAuthFailed(): void;
  clientAuthRefused(locked: boolean): void;
}
