// The check of a code a user types after their first factor (an authenticator app's, a recovery
// code), throttled as passwords are (src/authn/throttle.ts): the attempt is admitted per user and
// per source address BEFORE the code is compared, in one conditional write per key, so guesses sent
// at once are admitted one after another and only the allowance is checked, while right codes sent
// at once wait for those in flight rather than being refused. The user's count is a key
// of its own, `second-factor:<username>`, under the sign-in policy (TESSERA_SIGNIN_*): a right
// password clears the password's count, never this one, so knowing the password buys no more guesses
// at the code. `tessera users unlock` clears it with the others (its subject is the username).
import { type Requester, securityEvent } from '../events/index.ts';
import { type Refusal, signInAddressKey, Throttle, type ThrottleObserver, type ThrottlePolicy } from './throttle.ts';
import type { EventStore } from '../store/events.ts';
import type { ThrottleStore } from '../store/throttles.ts';
import type { User } from '../store/users.ts';

export interface CodeCheckDeps {
  store: EventStore & ThrottleStore;
  throttle: ThrottlePolicy;
  observer?: Pick<ThrottleObserver, 'signInFailed' | 'signInRefused'> | undefined;
}

export interface CodeAttempt {
  user: User;
  /** The step's method (`totp`, `recovery-code`), said in the failure's event. */
  method: string;
  clientId: string | null;
  requester: Requester;
  now: number;
}

/** Why a code was not accepted: wrong, or right but used already (said in the event). */
export type CodeVerdict = 'ok' | 'wrong_code' | 'replayed';

export type CodeCheck =
  { kind: 'ok' } | { kind: 'failed'; reason: 'wrong_code' | 'replayed' } | { kind: 'refused'; refusal: Refusal };

/** The throttle key of a user's codes. */
export const secondFactorKey = (user: User) => `second-factor:${user.username.toLowerCase()}`;

/** Counts the attempt, then runs `check` unless refused, and records what came of it. */
export async function checkCode(
  deps: CodeCheckDeps,
  attempt: CodeAttempt,
  check: () => Promise<CodeVerdict>,
): Promise<CodeCheck> {
  const { user, now, requester, clientId } = attempt;
  const subject = user.username.toLowerCase();
  const key = secondFactorKey(user);
  const counted = await new Throttle(deps.store).begin(
    [{ key, subject, policy: deps.throttle, onSuccess: 'clear' }, signInAddressKey(requester.ip, deps.throttle)],
    now,
  );
  if (counted.refused) {
    const { refused } = counted;
    deps.observer?.signInRefused(refused.locked);
    const data = {
      locked: refused.locked,
      retry_after: refused.retryAfter,
      by: refused.key.split(':')[0]!,
      method: attempt.method,
    };
    await deps.store.recordEvent(
      securityEvent('user.sign_in_throttled', now, { userId: user.id, clientId, requester, data }),
    );
    return { kind: 'refused', refusal: refused };
  }
  const verdict = await check();
  if (verdict === 'ok') {
    await counted.succeeded();
    return { kind: 'ok' };
  }
  deps.observer?.signInFailed('second_factor_failed');
  const locked = await counted.failed();
  const data = { reason: verdict, method: attempt.method };
  await deps.store.recordEvent(
    securityEvent('user.sign_in_failed', now, { userId: user.id, clientId, requester, data }),
  );
  if (locked.includes(key))
    await deps.store.recordEvent(securityEvent('user.locked', now, { userId: user.id, clientId, requester }));
  return { kind: 'failed', reason: verdict };
}
