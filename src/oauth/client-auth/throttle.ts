// Client authentication throttled like sign-ins (../throttle.ts), at the token, revocation and
// introspection endpoints, per (client_id, source address) and per source address: failures from one
// address never lock a client out at another, so knowing a client's id (a public client's is no
// secret) gives nobody a way to stop it. A public client's id is not counted at all (it has no secret
// to guess); its address is.
//
// With no work on the token endpoint's hot path: a successful authentication with keys that have not
// failed reads and writes nothing. Each instance keeps in memory the keys it has seen fail; while a
// key is failing, every attempt with it is counted before the secret is compared (Throttle.begin, one
// conditional write), so a burst of guesses gets no more than the allowance; the first success then
// clears it, and it costs nothing again. A key's first failure on an instance is counted after its
// check (there was no reason to count before), and a lock counted by other instances takes effect on
// this one at its first failure there, when it counts and reads the shared total.
import type { Client } from '../../store/clients.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import {
  addressKey,
  addressPolicy,
  blockedUntil,
  type Refusal,
  Throttle,
  type ThrottleKey,
  type ThrottleObserver,
  type ThrottlePolicy,
  type ThrottleState,
} from '../../authn/throttle.ts';

/** Keys remembered at most: beyond, the oldest are forgotten (their counts stay in the database). */
const REMEMBERED = 10_000;
const CLEAN = { kind: 'clean' } as const;
const COUNT = { kind: 'count' } as const;

/** What authenticateClient is given to throttle with: the instance's state, the source address, the time. */
export interface ClientAuthGuard {
  throttle: ClientAuthThrottle;
  ip: string | null;
  now: number;
}

/** What to do before the secret is compared. */
export type ClientAuthCheck =
  /** Nothing: no key of the attempt has failed here. */
  | { kind: 'clean' }
  /** A key is failing: count the attempt first (begin). */
  | { kind: 'count' }
  | { kind: 'refused'; refusal: Refusal };

/** An authentication counted before its check. */
export interface CountedClientAuth {
  refused?: undefined;
  succeeded(): Promise<void>;
  failed(): Promise<void>;
}

export class ClientAuthThrottle {
  readonly #throttle: Throttle;
  readonly #store: ThrottleStore;
  readonly #policy: ThrottlePolicy;
  readonly #observer: Pick<ThrottleObserver, 'clientAuthFailed' | 'clientAuthRefused'> | undefined;
  /** Keys that failed here, with the time before which they refuse (0 when they do not). */
  readonly #failing = new Map<string, { until: number; locked: boolean }>();

  constructor(
    store: ThrottleStore,
    policy: ThrottlePolicy,
    observer?: Pick<ThrottleObserver, 'clientAuthFailed' | 'clientAuthRefused'>,
  ) {
    this.#store = store;
    this.#throttle = new Throttle(store);
    this.#policy = policy;
    this.#observer = observer;
  }

  /** The keys of an attempt with `clientId` from `ip`: the pair's and the address's, or the address's alone. */
  keys(clientId: string, client: Client | undefined, ip: string | null): ThrottleKey[] {
    const address = addressKey(ip);
    const perAddress = { key: `client-address:${address}`, subject: `client-address:${address}` };
    const keys: ThrottleKey[] = [{ ...perAddress, policy: addressPolicy(this.#policy) }];
    if (client?.tokenEndpointAuthMethod === 'none') return keys;
    return [
      { key: `client:${clientId}@${address}`, subject: clientId, policy: this.#policy, onSuccess: 'clear' },
      ...keys,
    ];
  }

  /** Lookups in memory: nothing at all while no key has failed here. */
  check(clientId: string, ip: string | null, now: number): ClientAuthCheck {
    if (this.#failing.size === 0) return CLEAN;
    const address = addressKey(ip);
    let worst: Refusal | undefined;
    let failing = false;
    for (const key of [`client:${clientId}@${address}`, `client-address:${address}`]) {
      const state = this.#failing.get(key);
      if (!state) continue;
      failing = true;
      if (state.until > now && (!worst || state.until - now > worst.retryAfter)) {
        worst = { key, locked: state.locked, retryAfter: state.until - now };
      }
    }
    if (worst) {
      this.#observer?.clientAuthRefused(worst.locked);
      return { kind: 'refused', refusal: worst };
    }
    return failing ? COUNT : CLEAN;
  }

  /** Counts the attempt before its secret is compared: what to do after, or the refusal. */
  async begin(keys: ThrottleKey[], now: number): Promise<CountedClientAuth | { refused: Refusal }> {
    const attempt = await this.#throttle.begin(keys, now);
    if (attempt.refused) {
      const refusal = attempt.refused;
      this.#remember(refusal.key, { until: now + refusal.retryAfter, locked: refusal.locked });
      this.#observer?.clientAuthRefused(refusal.locked);
      return { refused: refusal };
    }
    return {
      succeeded: async () => {
        for (const key of keys) this.#failing.delete(key.key);
        await attempt.succeeded();
      },
      failed: async () => {
        this.#observer?.clientAuthFailed();
        await attempt.failed();
        this.#learn(keys, attempt.counted);
      },
    };
  }

  /** A failure of an attempt that was not counted before (its keys were clean here). */
  async failed(keys: ThrottleKey[], now: number): Promise<void> {
    this.#observer?.clientAuthFailed();
    const window = this.#policy.window;
    const states = await this.#store.recordFailures({ keys, now, window });
    this.#learn(keys, states);
  }

  #learn(keys: ThrottleKey[], states: ThrottleState[]): void {
    for (const state of states) {
      const policy = keys.find((k) => k.key === state.key)?.policy ?? this.#policy;
      this.#remember(state.key, { until: blockedUntil(state, policy), locked: state.failures >= policy.lockAfter });
    }
  }

  #remember(key: string, state: { until: number; locked: boolean }): void {
    this.#failing.delete(key);
    if (this.#failing.size >= REMEMBERED) this.#failing.delete(this.#failing.keys().next().value!);
    this.#failing.set(key, state);
  }
}
