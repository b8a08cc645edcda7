// Online guessing, throttled (RFC 6749 §10.10, RFC 6819 §4.4.3.6, NIST SP 800-63B §5.2.2): failed
// sign-ins and client authentications are counted per account (or client) and per source address,
// in the database so that every instance shares them. Past a number of free failures each attempt
// must wait for a delay that doubles with every further failure; past a limit the key is locked. A
// throttled attempt is refused before the password is hashed or the secret compared. Counters reset
// on success and after a quiet window.
//
// Keys: `account:<username>` (any username, existing or not, so that throttling says nothing of
// which exist), `device:<id>:<username>` when the browser signed in as that user before (a device
// cookie, ../http/device.ts: an attacker elsewhere does not lock the user out of it), `address:<ip>`,
// `client:<client_id>` and `client-address:<ip>`. Addresses get ten times the account's allowance:
// many people share one (a NAT, an office).

export interface ThrottlePolicy {
  /** Failures allowed before delays start. */
  freeFailures: number;
  /** Failures after which the key is locked for `lockSeconds`. */
  lockAfter: number;
  lockSeconds: number;
  /** Seconds without a failure after which the count starts again. */
  window: number;
}

/** A key's failures, and when the last one was. */
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

/** What the policy is for an address: ten times the allowance of an account. */
export function addressPolicy(policy: ThrottlePolicy): ThrottlePolicy {
  return { ...policy, freeFailures: policy.freeFailures * 10, lockAfter: policy.lockAfter * 10 };
}

/** Until when a key with these failures refuses attempts: 0 when it does not. */
export function blockedUntil(state: ThrottleState, policy: ThrottlePolicy): number {
  if (state.failures >= policy.lockAfter) return state.lastFailureAt + policy.lockSeconds;
  if (state.failures < policy.freeFailures) return 0;
  const delay = Math.min(2 ** (state.failures - policy.freeFailures), policy.lockSeconds);
  return state.lastFailureAt + delay;
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

/** Whether the failure that brought a key to `failures` locked it. */
export function lockedBy(failures: number, policy: ThrottlePolicy): boolean {
  return failures === policy.lockAfter;
}

/** What sign-ins and client authentications report to the metrics. */
export interface ThrottleObserver {
  signInFailed(): void;
  signInRefused(locked: boolean): void;
  clientAuthFailed(): void;
  clientAuthRefused(locked: boolean): void;
}
