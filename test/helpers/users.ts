// A user as the store holds it, for tests that write one straight into a store or hand one to a
// function (not through the CLI or the pages): its id (fresh unless given), a username and a verified
// address made from it, no password, created at the tests' fixed time.
import type { User } from '../../src/store/users.ts';
import { newId } from '../../src/tokens/opaque.ts';

/** The time the tests' users are created at (their clocks' fixed time). */
export const CREATED_AT = 1_800_000_000;

export function userRecord(over: Partial<User> = {}): User {
  const id = over.id ?? newId();
  return {
    id,
    username: `user-${id.toLowerCase()}`,
    email: `${id.toLowerCase()}@example.com`,
    emailVerified: true,
    name: null,
    givenName: null,
    familyName: null,
    passwordHash: null,
    disabled: false,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    roles: [],
    ...over,
  };
}
