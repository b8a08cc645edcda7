// Online guessing, throttled (RFC 6749 §10.10, RFC 6819 §4.4.3.6, NIST SP 800-63B §5.2.2): attempts at
// a password, a code or a secret are counted per key (an account, a device, a client at an address,
// an address), in the database so that every instance shares them. Past a number of free failures
// each attempt must wait for a delay that doubles with every further failure; past a limit the key
// is locked. Counts start again after a quiet window.
//
// Every attempt is counted BEFORE the password, code or secret is checked, in one conditional write
// per key that counts it only if the key allows an attempt now (ThrottleStore.countAttempts: an
// upsert whose WHERE is the policy): sixty guesses sent at once are counted one after another by the
// database, on SQLite and PostgreSQL alike and across instances, and only the allowance gets through;
// the rest are refused unchecked. What then happens to the count is the outcome's:
//
//   const attempt = await throttle.begin([accountKey, addressKey], now);
//   if (attempt.refused) return tooMany(attempt.refused);   // 429, Retry-After: nothing was checked
//   if (await check(secret)) await attempt.succeeded();       // e.g. the account's count cleared
//   else await attempt.failed();                              // the attempt stays counted
//
// Each key says what a success and a failure do to its count: `clear` it (an account or a device: the
// right password ends its run of failures), `giveBack` the attempt (an address: many people share
// one, and their successes are not failures), or `keep` it (registrations, counted whatever becomes
// of them). A TOTP, recovery-code or reset step is the same three lines with keys of its own.
//
// Keys: `account:<username>` (any username, existing or not, so that throttling says nothing of which
// exist), `device:<id>:<username>` when the browser signed in as that user before (a device cookie,
// ../http/browser.ts: an attacker elsewhere does not lock the user out of it), `address:<address>`,
// `client:<client_id>@<address>` and `client-address:<address>` (./client-auth/throttle.ts), and
// `register:<address>`. An address is an IPv4 address or an IPv6 /64 (addressKey: one subscriber's
// network, which hands its holder 2^64 addresses). Addresses get ten times an account's allowance:
// many people share one (a NAT, an office).
import { isIPv4, isIPv6 } from 'node:net';

export interface ThrottlePolicy {
  /** Failures allowed before delays start. */
  freeFailures: number;
  /** Failures after which the key is locked for `lockSeconds`. */
  lockAfter: number;
  lockSeconds: number;
  /** Seconds without a failure after which the count starts again. */
  window: number;
}

/** A key's failures (attempts counted and not given back), and when the last one was. */
export interface ThrottleState {
  key: string;
  failures: number;
  lastFailureAt: number;
}

export interface Refusal {
  /** Locked (the limit reached) rather than delayed. */
  locked: boolean;
  /** Seconds until an attempt is accepted again. */
  retryAfter: number;
  key: string;
}

/** What a success or a failure does to a key's count. */
export type ThrottleOutcome = 'clear' | 'giveBack' | 'keep';

export interface ThrottleKey {
  key: string;
  /** The username or client the key counts for, so that `tessera users unlock` finds its keys. */
  subject: string;
  policy: ThrottlePolicy;
  /** Default: giveBack. */
  onSuccess?: ThrottleOutcome;
  /** Default: keep. */
  onFailure?: ThrottleOutcome;
}

/** What the throttle needs of the database (../store/throttles.ts). */
export interface ThrottleCounter {
  /**
   * Counts an attempt for each key that allows one at `now` under its policy, each in one
   * conditional upsert, all in one write: the new states of the keys counted; a key missing from
   * the answer refused the attempt and was not counted.
   */
  countAttempts(input: {
    keys: Array<Omit<ThrottleKey, 'onSuccess' | 'onFailure'>>;
    now: number;
  }): Promise<ThrottleState[]>;
  getThrottles(keys: string[]): Promise<ThrottleState[]>;
  /** Forgets the failures of the keys `clear`, and takes one attempt back from `giveBack`'s: one write. */
  settleAttempts(input: { clear: string[]; giveBack: string[] }): Promise<void>;
}

/** An attempt counted: what its outcome does to the counts. */
export interface Attempt {
  refused?: undefined;
  /** The keys' states with this attempt counted. */
  counted: ThrottleState[];
  succeeded(): Promise<void>;
  /** The keys this failure locked (their count reached the limit with it). */
  failed(): Promise<string[]>;
}

export class Throttle {
  readonly #store: ThrottleCounter;

  constructor(store: ThrottleCounter) {
    this.#store = store;
  }

  /** Counts the attempt on every key before anything is checked, or refuses it having counted nothing. */
  async begin(keys: ThrottleKey[], now: number): Promise<Attempt | { refused: Refusal }> {
    const counted = await this.#store.countAttempts({ keys, now });
    if (counted.length < keys.length) {
      const refused = keys.filter((k) => !counted.some((s) => s.key === k.key));
      // Those counted are given back: the attempt is not made.
      if (counted.length > 0) await this.#store.settleAttempts({ clear: [], giveBack: counted.map((s) => s.key) });
      const states = await this.#store.getThrottles(refused.map((k) => k.key));
      const found = refusal(
        refused.map((k) => ({ state: states.find((s) => s.key === k.key), policy: k.policy })),
        now,
      );
      // Allowed again since (the clock moved on): still refused, for the shortest wait.
      return { refused: found ?? { locked: false, retryAfter: 1, key: refused[0]!.key } };
    }
    const settle = async (outcome: (k: ThrottleKey) => ThrottleOutcome) => {
      const clear = keys.filter((k) => outcome(k) === 'clear').map((k) => k.key);
      const giveBack = keys.filter((k) => outcome(k) === 'giveBack').map((k) => k.key);
      if (clear.length > 0 || giveBack.length > 0) await this.#store.settleAttempts({ clear, giveBack });
    };
    return {
      counted,
      succeeded: () => settle((k) => k.onSuccess ?? 'giveBack'),
      failed: async () => {
        await settle((k) => k.onFailure ?? 'keep');
        return keys
          .filter((k) => (k.onFailure ?? 'keep') === 'keep')
          .filter((k) => counted.find((s) => s.key === k.key)?.failures === k.policy.lockAfter)
          .map((k) => k.key);
      },
    };
  }
}

/** What the policy is for an address: ten times the allowance of an account. */
export function addressPolicy(policy: ThrottlePolicy): ThrottlePolicy {
  return { ...policy, freeFailures: policy.freeFailures * 10, lockAfter: policy.lockAfter * 10 };
}

/**
 * The wait after a key's `failures`, as steps from the most failures down: after `atLeast` failures,
 * `seconds` (none below the last step). The lock at `lockAfter`; before it a delay doubling from 1 s
 * at `freeFailures`, at most `lockSeconds`. The store writes these as the condition of its upsert.
 */
export function delaySteps(policy: ThrottlePolicy): Array<{ atLeast: number; seconds: number }> {
  const steps = [{ atLeast: policy.lockAfter, seconds: policy.lockSeconds }];
  for (let failures = policy.lockAfter - 1; failures >= policy.freeFailures; failures--) {
    const seconds = Math.min(2 ** (failures - policy.freeFailures), policy.lockSeconds);
    // The doubling reaches the lock's length within ~30 steps: one step covers everything above.
    if (seconds === steps.at(-1)!.seconds) steps.at(-1)!.atLeast = failures;
    else steps.push({ atLeast: failures, seconds });
  }
  return steps;
}

/** Until when a key with these failures refuses attempts: 0 when it does not. */
export function blockedUntil(state: ThrottleState, policy: ThrottlePolicy): number {
  const step = delaySteps(policy).find((s) => state.failures >= s.atLeast);
  return step ? state.lastFailureAt + step.seconds : 0;
}

/** The first refusal among the keys' states at `now`, with their policies; undefined when none refuses. */
export function refusal(
  checks: Array<{ state: ThrottleState | undefined; policy: ThrottlePolicy }>,
  now: number,
): Refusal | undefined {
  let worst: Refusal | undefined;
  for (const { state, policy } of checks) {
    if (!state || state.lastFailureAt <= now - policy.window) continue;
    const until = blockedUntil(state, policy);
    if (until <= now) continue;
    const candidate = { locked: state.failures >= policy.lockAfter, retryAfter: until - now, key: state.key };
    if (!worst || candidate.retryAfter > worst.retryAfter) worst = candidate;
  }
  return worst;
}

/**
 * The address an address key counts: an IPv4 address as it is, an IPv6 address as its /64 (an
 * IPv4-mapped one as the IPv4 address), anything else as given.
 */
export function addressKey(ip: string | null): string {
  if (ip === null || ip === '') return 'unknown';
  if (isIPv4(ip)) return ip;
  const address = ip.replace(/%.*$/, '');
  if (!isIPv6(address)) return ip;
  // IPv4-mapped (RFC 4291 §2.5.5.2) and NAT64's well-known prefix (RFC 6052): the IPv4 client's address.
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.toLowerCase().split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const before = groups(head);
  // An embedded IPv4 address (the last 32 bits) counts as two groups; only the first four matter.
  const after = groups(tail).flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const gap = tail === undefined ? [] : Array<string>(8 - before.length - after.length).fill('0');
  const full = [...before, ...gap, ...after];
  return `${full
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** What sign-ins and client authentications report to the metrics. */
export interface ThrottleObserver {
  signInFailed(): void;
  signInRefused(locked: boolean): void;
  clientAuthFailed(): void;
  clientAuthRefused(locked: boolean): void;
}
