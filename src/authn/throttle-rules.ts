// The throttle's rules as pure functions (./throttle.ts says how they are used): the doubling delay
// after a key's failures, whether a key refuses an attempt now, and what an address key counts.
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

/** A key's settled failures and when the last one was; its attempts in flight and until when they count. */
export interface ThrottleState {
  key: string;
  failures: number;
  lastFailureAt: number;
  /** Attempts admitted and not yet settled (none for a key that counts attempts as they are made). */
  pending: number;
  /** When the pending attempts stop counting: their lease, for an instance that stopped mid-check. */
  pendingUntil: number;
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
export function blockedUntil(state: Omit<ThrottleState, 'pending' | 'pendingUntil'>, policy: ThrottlePolicy): number {
  const step = delaySteps(policy).find((s) => state.failures >= s.atLeast);
  return step ? state.lastFailureAt + step.seconds : 0;
}

/**
 * The first refusal among the keys' settled failures at `now`, with their policies; undefined when
 * none refuses (attempts in flight are not failures: ./throttle.ts waits for them).
 */
export function refusal(
  checks: Array<{ state: Omit<ThrottleState, 'pending' | 'pendingUntil'> | undefined; policy: ThrottlePolicy }>,
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
 * Whether a key admits one more attempt at `now`: while its failures and its live pending attempts
 * together are below the free failures, or, past them, once nothing is in flight and the wait after
 * the last failure is over (or the count is stale). The store's upsert has this as its condition
 * (../store/throttles.ts); this copy only tells a waiting attempt when to try the write again.
 */
export function admits(state: ThrottleState | undefined, policy: ThrottlePolicy, now: number): boolean {
  if (!state) return true;
  const stale = state.lastFailureAt <= now - policy.window;
  const failures = stale ? 0 : state.failures;
  const pending = state.pendingUntil > now ? state.pending : 0;
  if (failures + pending < Math.min(policy.freeFailures, policy.lockAfter)) return true;
  return pending === 0 && (stale || blockedUntil(state, policy) <= now);
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
