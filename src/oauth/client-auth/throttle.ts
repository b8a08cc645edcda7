// Client authentication throttled like sign-ins (../throttle.ts), at the token, revocation and
// introspection endpoints, per (client_id, source address) and per source address: failures from one
// address never lock a client out at another, so knowing a client's id (a public client's is no
// secret) gives nobody a way to stop it. A public client's id is not counted at all (it has no secret
// to guess); its address is.
//
// With no work on the token endpoint's hot path: an authentication of a client from an address it
// authenticated from before on this instance, neither failing since, reads and writes nothing for
// throttling. Any other attempt is admitted first and compared after (Throttle.begin, one
// conditional write, its attempt pending until settled), so a burst of guesses gets no more than
// the allowance checked, and right secrets sent at once all get through (those beyond the
// allowance wait for the ones in flight); its success makes the pair known here, and it costs
// nothing again. Each instance keeps in memory the pairs it has seen succeed and the keys it has
// seen fail (refused here without asking the database while their delay runs). What stays open is
// a burst of wrong secrets from the very address of a client known here, sent before the first of
// them fails: those are compared, counted after, and the pair is no longer trusted from then on.
import type { Client } from '../../store/clients.ts';
import type { AssertionCheck } from './assertion.ts';
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
  /** What checks client assertions (private_key_jwt, client_secret_jwt); without it they are refused. */
  assertion?: AssertionCheck;
}

/** What to do before the secret is compared. */
export type ClientAuthCheck =
  /** Nothing: the pair authenticated here before, and no key of the attempt has failed since. */
  | { kind: 'clean' }
  /** Admit the attempt first (begin). */
  | { kind: 'count' }
  | { kind: 'refused'; refusal: Refusal };

/** An authentication admitted before its check. */
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
  /** Pairs (`client:<id>@<address>`) that authenticated here and have not failed since. */
  readonly #known = new Set<string>();
  readonly #pairs = new WeakMap<ThrottleKey[], string>();

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
    const pair = `client:${clientId}@${address}`;
    const perAddress = { key: `client-address:${address}`, subject: `client-address:${address}` };
    const keys: ThrottleKey[] = [{ ...perAddress, policy: addressPolicy(this.#policy) }];
    if (client?.tokenEndpointAuthMethod !== 'none') {
      keys.unshift({ key: pair, subject: clientId, policy: this.#policy, onSuccess: 'clear' });
    }
    // The pair the keys are for, a public client's too (whose id is not counted, but may be known).
    this.#pairs.set(keys, pair);
    return keys;
  }

  /** Lookups in memory: nothing else for a pair known here while no key has failed here. */
  check(clientId: string, ip: string | null, now: number): ClientAuthCheck {
    const address = addressKey(ip);
    const pair = `client:${clientId}@${address}`;
    if (this.#failing.size === 0) return this.#known.has(pair) ? CLEAN : COUNT;
    let worst: Refusal | undefined;
    let failing = false;
    for (const key of [pair, `client-address:${address}`]) {
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
    return failing || !this.#known.has(pair) ? COUNT : CLEAN;
  }

  /** Admits the attempt before its secret is compared: what to do after, or the refusal. */
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
        this.#trust(keys);
      },
      failed: async () => {
        this.#observer?.clientAuthFailed();
        await attempt.failed();
        this.#learn(keys, attempt.settled);
      },
    };
  }

  /** A failure of an attempt that was not admitted before (its pair was known here). */
  async failed(keys: ThrottleKey[], now: number): Promise<void> {
    this.#observer?.clientAuthFailed();
    const window = this.#policy.window;
    const states = await this.#store.recordFailures({ keys, now, window });
    this.#learn(keys, states);
  }

  /** A pair that authenticated: known here from now on (the oldest forgotten beyond REMEMBERED). */
  #trust(keys: ThrottleKey[]): void {
    const pair = this.#pairs.get(keys);
    if (pair === undefined) return;
    this.#known.delete(pair);
    if (this.#known.size >= REMEMBERED) this.#known.delete(this.#known.values().next().value!);
    this.#known.add(pair);
  }

  #learn(keys: ThrottleKey[], states: ThrottleState[]): void {
    const pair = this.#pairs.get(keys);
    if (pair !== undefined) this.#known.delete(pair);
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
