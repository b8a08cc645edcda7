// Whether a user's sign-ins are locked or delayed, and why: the answer to "why can't Alice sign in"
// that `tessera users show`, the admin API (`locked`) and the console give alike.
import { refusal, type ThrottlePolicy } from '../authn/throttle.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { User } from '../store/users.ts';

export interface SignInLock {
  /**
   * What the key counts: sign-ins from anywhere, from one browser the user signed in with before, or
   * second-factor codes after the password.
   */
  from: 'anywhere' | 'one known browser' | 'codes after the password';
  failures: number;
  /** Epoch seconds. */
  lastFailureAt: number;
  state: 'open' | 'delayed' | 'locked';
  /** Epoch seconds when the lock or delay ends; null when open. */
  until: number | null;
}

/**
 * The throttling of the user's sign-ins (src/authn/throttle.ts): one entry per key counted for the
 * username.
 */
export async function signInLocks(
  store: Pick<ThrottleStore, 'getThrottlesOf'>,
  policy: ThrottlePolicy,
  user: User,
  now: number,
): Promise<SignInLock[]> {
  const states = await store.getThrottlesOf(user.username.toLowerCase());
  return states.map((state) => {
    const refused = refusal([{ state, policy }], now);
    return {
      from: state.key.startsWith('device:')
        ? 'one known browser'
        : state.key.startsWith('second-factor:')
          ? 'codes after the password'
          : 'anywhere',
      failures: state.failures,
      lastFailureAt: state.lastFailureAt,
      state: refused ? (refused.locked ? 'locked' : 'delayed') : 'open',
      until: refused ? now + refused.retryAfter : null,
    };
  });
}

/** The first lock or delay in force, if any: what "locked" means to whoever helps the user. */
export const lockInForce = (locks: readonly SignInLock[]) => locks.find((lock) => lock.state !== 'open');
