// What the factor tests (./totp.test.ts, ./recovery.test.ts, ./passkeys.test.ts, ./password.test.ts)
// verify against: a real store (SQLite in memory, migrated), so that a code or challenge spent once
// is spent by the store's own conditional write, a user of the test's own (../helpers/users.ts), and a
// step's form.
import { securityEvent } from '../../src/events/index.ts';
import type { FormAttempt } from '../../src/authn/step.ts';
import type { ThrottlePolicy } from '../../src/authn/throttle.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { CREATED_AT, userRecord } from '../helpers/users.ts';

export const NOW = CREATED_AT;

/** The sign-in policy's defaults (TESSERA_SIGNIN_*), as the config makes them. */
export const THROTTLE: ThrottlePolicy = { freeFailures: 5, lockAfter: 20, lockSeconds: 900, window: 900 };

export async function memoryStore(): Promise<Store> {
  const store = await openStore('sqlite::memory:');
  await store.migrate();
  return store;
}

export async function newUser(store: Store, over: Partial<User> = {}): Promise<User> {
  const user = userRecord(over);
  await store.createUser(user);
  return user;
}

/** What a step's form posts, of `user` (a later step) or of nobody yet (a first step). */
export function attempt(fields: Record<string, string>, over: Partial<Omit<FormAttempt, 'field'>> = {}): FormAttempt {
  return {
    field: (name) => fields[name],
    user: null,
    clientId: null,
    requester: { ip: '192.0.2.1', userAgent: 'test' },
    knownDevice: () => undefined,
    isBound: () => true,
    now: NOW,
    ...over,
  };
}

export const enrolledEvent = (userId: string) =>
  securityEvent('mfa.enrolled', NOW, { userId, data: { method: 'totp' } });
