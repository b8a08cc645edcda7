// The password step (src/authn/password/step.ts) verifies the sign-in form against a real store:
// the right password signs its user in (`pwd`), a wrong one, an unknown username and a disabled user
// do not, and wrong guesses beyond the allowance are refused before any password is checked.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashPassword, passwordStats } from '../../src/authn/password/hash.ts';
import { passwordStep } from '../../src/authn/password/step.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { attempt, memoryStore, newUser, NOW, THROTTLE } from './factors-store.ts';

describe('the password step verifies the sign-in form', () => {
  let store: Store;
  let user: User;
  const deps = () => ({ store, throttle: THROTTLE });
  const signIn = (username: string, password: string, now = NOW) =>
    passwordStep.verify(deps(), attempt({ username, password }, { now }));
  before(async () => {
    store = await memoryStore();
    user = await newUser(store, { passwordHash: await hashPassword('correct horse battery') });
  });
  after(() => store.close());

  it('the right password: its user, the factor `pwd` of this time', async () => {
    assert.deepEqual(await signIn(user.username, 'correct horse battery'), {
      kind: 'verified',
      user,
      factor: { method: 'password', amr: ['pwd'], at: NOW },
    });
    assert.equal(passwordStep.enrolled(user), true);
    assert.equal(passwordStep.enrolled({ ...user, passwordHash: null }), false);
  });

  it('a wrong password, an unknown username, a disabled user: failed, each with its reason for the log', async () => {
    assert.deepEqual(await signIn(user.username, 'wrong', NOW + 1000), { kind: 'failed', reason: 'wrong_password' });
    assert.deepEqual(await signIn('nobody', 'correct horse battery', NOW + 1000), {
      kind: 'failed',
      reason: 'unknown_user',
    });
    const off = await newUser(store, { passwordHash: await hashPassword('correct horse battery'), disabled: true });
    assert.deepEqual(await signIn(off.username, 'correct horse battery', NOW + 1000), {
      kind: 'failed',
      reason: 'disabled',
    });
  });

  it('beyond the free failures, a guess at once is refused before any password is hashed', async () => {
    const target = await newUser(store, { passwordHash: await hashPassword('another good password') });
    const at = NOW + 10_000;
    for (let i = 0; i < THROTTLE.freeFailures; i++)
      assert.equal((await signIn(target.username, `guess ${i}`, at)).kind, 'failed');
    const hashed = passwordStats().verified;
    const refused = await signIn(target.username, 'another good password', at);
    assert.equal(refused.kind, 'refused');
    assert.equal(passwordStats().verified, hashed, 'nothing hashed');
  });
});
