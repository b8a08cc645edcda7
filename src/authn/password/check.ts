// A sign-in with a username and password: admitted first against its account (or device) and source
// address (src/authn/throttle.ts), and refused at once, before any password is hashed, when their
// failures allow no attempt now (attempts merely in flight are waited for, not refused); otherwise
// the password is checked, in the same time whether or not the username exists, and the outcome
// recorded in the audit trail.
import { type Requester, securityEvent } from '../../events/index.ts';
import type { EventStore } from '../../store/events.ts';
import type { ThrottleStore } from '../../store/throttles.ts';
import type { User, UserStore } from '../../store/users.ts';
import type { PasswordFailure } from '../failures.ts';
import { dummyPasswordHash, verifyPassword } from './hash.ts';
import { type Refusal, signInAddressKey, Throttle, type ThrottleObserver, type ThrottlePolicy } from '../throttle.ts';

/**
 * The user a username and password sign in, or why not. The password is hashed whether or not the
 * username exists, so that the time taken says nothing of which do.
 */
export async function authenticateUser(
  store: UserStore,
  username: string,
  password: string,
): Promise<{ user: User } | { reason: PasswordFailure; user: User | undefined }> {
  const user = username ? await store.getUserByUsername(username) : undefined;
  const hash = user?.passwordHash ?? (await dummyPasswordHash());
  const valid = await verifyPassword(password, hash);
  if (!user) return { reason: 'unknown_user', user };
  if (user.disabled) return { reason: 'disabled', user };
  return valid && user.passwordHash !== null ? { user } : { reason: 'wrong_password', user };
}

export interface SignInAttempt {
  username: string;
  password: string;
  /** The browser's device id, when its device cookie says it signed in as this username before. */
  knownDevice: string | undefined;
  /** The client the sign-in is for (the authorization request's), if any. */
  clientId: string | null;
  requester: Requester;
  now: number;
}

export type SignInOutcome =
  | { kind: 'signed-in'; user: User }
  | { kind: 'failed'; reason: PasswordFailure }
  | { kind: 'refused'; refusal: Refusal };

type SignInStore = UserStore & EventStore & ThrottleStore;

/** Usernames are compared as typed in the form, so counting must be too: the key is the lowercase username. */
const subjectOf = (username: string) => username.toLowerCase();

export async function signIn(
  store: SignInStore,
  policy: ThrottlePolicy,
  attempt: SignInAttempt,
  observer?: Pick<ThrottleObserver, 'signInFailed' | 'signInRefused'>,
): Promise<SignInOutcome> {
  const { now, requester } = attempt;
  const subject = subjectOf(attempt.username);
  // A browser that signed in as this user before counts its failures apart from everyone else's,
  // so that someone guessing elsewhere does not lock the user out of it (OWASP's device cookies).
  const account = attempt.knownDevice ? `device:${attempt.knownDevice}:${subject}` : `account:${subject}`;
  const counted = await new Throttle(store).begin(
    [{ key: account, subject, policy, onSuccess: 'clear' }, signInAddressKey(requester.ip, policy)],
    now,
  );
  if (counted.refused) {
    const refused = counted.refused;
    observer?.signInRefused(refused.locked);
    const user = attempt.username ? await store.getUserByUsername(attempt.username) : undefined;
    const data = { locked: refused.locked, retry_after: refused.retryAfter, by: refused.key.split(':')[0]! };
    const event = securityEvent('user.sign_in_throttled', now, {
      userId: user?.id ?? null,
      clientId: attempt.clientId,
      requester,
      data,
    });
    await store.recordEvent(event);
    return { kind: 'refused', refusal: refused };
  }

  const authenticated = await authenticateUser(store, attempt.username, attempt.password);
  if (!('reason' in authenticated)) {
    await counted.succeeded();
    return { kind: 'signed-in', user: authenticated.user };
  }
  const { reason, user } = authenticated;
  observer?.signInFailed(reason);
  const locked = await counted.failed();
  await recordFailure(store, attempt, { reason, userId: user?.id ?? null, locked: locked.includes(account) });
  return { kind: 'failed', reason };
}

/**
 * `user.sign_in_failed` (and `user.locked` when this failure locked the account), with the user when
 * the username names one. An unknown username is not recorded: people type their password into it.
 */
async function recordFailure(
  store: SignInStore,
  attempt: SignInAttempt,
  failure: { reason: PasswordFailure; userId: string | null; locked: boolean },
): Promise<void> {
  const { now, requester, clientId } = attempt;
  const { reason, userId, locked } = failure;
  await store.recordEvent(securityEvent('user.sign_in_failed', now, { userId, clientId, requester, data: { reason } }));
  if (locked) await store.recordEvent(securityEvent('user.locked', now, { userId, clientId, requester }));
}
