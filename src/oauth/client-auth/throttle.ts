// Client authentication throttled like sign-ins (../throttle.ts), per client_id and per source
// address, at the token, revocation and introspection endpoints; with no work on the token endpoint's
// hot path. Failures are counted in the database (shared by every instance), but a successful
// authentication reads nothing: each instance keeps in memory the keys it has seen fail and, of
// those, the ones refusing attempts until a time. A lock counted by other instances takes effect on
// this one at its next failure for that key, when it counts and reads the shared total.
import type { ThrottleStore } from '../../store/throttles.ts';
import { addressPolicy, blockedUntil, type Refusal, type ThrottleObserver, type ThrottlePolicy } from '../throttle.ts';

/** Keys remembered at most: beyond, the oldest are forgotten (their counts stay in the database). */
const REMEMBERED = 10_000;

/** What authenticateClient is given to throttle with: the instance's state, the source address, the time. */
export interface ClientAuthGuard {
  throttle: ClientAuthThrottle;
  ip: string | null;
  now: number;
}

export class ClientAuthThrottle {
  readonly #store: ThrottleStore;
  readonly #policy: ThrottlePolicy;
  readonly #observer: Pick<ThrottleObserver, 'clientAuthFailed' | 'clientAuthRefused'> | undefined;
  /** Keys that failed here, with the time before which they refuse (0 when they do not yet). */
  readonly #failing = new Map<string, { until: number; locked: boolean }>();

  constructor(
    store: ThrottleStore,
    policy: ThrottlePolicy,
    observer?: Pick<ThrottleObserver, 'clientAuthFailed' | 'clientAuthRefused'>,
  ) {
    this.#store = store;
    this.#policy = policy;
    this.#observer = observer;
  }

  static keys(clientId: string, ip: string | null): [string, string] {
    return [`client:${clientId}`, `client-address:${ip ?? 'unknown'}`];
  }

  /** Two lookups in memory: a refusal while either key is throttled here. */
  check(clientId: string, ip: string | null, now: number): Refusal | undefined {
    if (this.#failing.size === 0) return undefined;
    let worst: Refusal | undefined;
    for (const key of ClientAuthThrottle.keys(clientId, ip)) {
      const state = this.#failing.get(key);
      if (!state || state.until <= now) continue;
      if (!worst || state.until - now > worst.retryAfter)
        worst = { key, locked: state.locked, retryAfter: state.until - now };
    }
    if (worst) this.#observer?.clientAuthRefused(worst.locked);
    return worst;
  }

  /** Counts a failure for both keys, in the database, and remembers until when they refuse. */
  async failed(clientId: string, ip: string | null, now: number): Promise<void> {
    this.#observer?.clientAuthFailed();
    const [client, address] = ClientAuthThrottle.keys(clientId, ip);
    const states = await this.#store.recordFailures({
      keys: [
        { key: client, subject: clientId },
        { key: address, subject: address },
      ],
      now,
      window: this.#policy.window,
    });
    for (const state of states) {
      const policy = state.key === client ? this.#policy : addressPolicy(this.#policy);
      if (this.#failing.size >= REMEMBERED) this.#failing.delete(this.#failing.keys().next().value!);
      this.#failing.set(state.key, { until: blockedUntil(state, policy), locked: state.failures >= policy.lockAfter });
    }
  }

  /** After a success: a client that failed here before starts counting again; nothing to wait for otherwise. */
  succeeded(clientId: string): Promise<void> | undefined {
    if (this.#failing.size === 0 || !this.#failing.delete(`client:${clientId}`)) return undefined;
    return this.#store.clearThrottles([`client:${clientId}`]);
  }
}
