// Checking a user's credentials, in the same time whether or not the username exists, and recording
// a failed sign-in in the audit trail.
import { type Requester, securityEvent } from '../events/index.ts';
import type { EventStore, User, UserStore } from '../store/store.ts';
import { dummyPasswordHash, verifyPassword } from '../tokens/passwords.ts';

export async function authenticateUser(
  store: UserStore,
  username: string,
  password: string,
): Promise<User | undefined> {
  const user = username ? await store.getUserByUsername(username) : undefined;
  const hash = user?.passwordHash ?? (await dummyPasswordHash());
  const valid = await verifyPassword(password, hash);
  return valid && user && user.passwordHash !== null && !user.disabled ? user : undefined;
}

/**
 * `user.sign_in_failed`, with the user when the username names one. An unknown username is not
 * recorded: people type their password into the username field.
 */
export async function recordFailedSignIn(
  store: UserStore & EventStore,
  username: string,
  clientId: string | null,
  now: number,
  requester: Requester,
): Promise<void> {
  const user = username ? await store.getUserByUsername(username) : undefined;
  const reason = !user ? 'unknown_user' : user.disabled ? 'disabled' : 'wrong_password';
  await store.recordEvent(
    securityEvent('user.sign_in_failed', now, { userId: user?.id ?? null, clientId, requester, data: { reason } }),
  );
}
