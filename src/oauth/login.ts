// Checking a user's credentials, in the same time whether or not the username exists.
import type { User, UserStore } from '../store/store.ts';
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
