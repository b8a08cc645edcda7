// The recovery-code step (src/authn/recovery/): the codes made, and the step's verification against a
// real store: each code works once (also when two requests bring it at once), typed in any case with
// or without dashes, only for its own user, and only after a first step named that user.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newRecoveryCodes, recoveryCodeHash, typedRecoveryCode } from '../../src/authn/recovery/codes.ts';
import { recoveryCodeStep } from '../../src/authn/recovery/step.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { attempt, enrolledEvent, memoryStore, newUser, NOW, THROTTLE } from './factors-store.ts';

describe('recovery codes', () => {
  it('ten codes of 80 bits, hashed per user, typed in any case with or without dashes', () => {
    const codes = newRecoveryCodes();
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, /^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    const [code] = codes;
    assert.equal(typedRecoveryCode(code!.toUpperCase().replace(/-/g, ' ')), code!.replace(/-/g, ''));
    assert.equal(recoveryCodeHash('u1', code!), recoveryCodeHash('u1', code!.replace(/-/g, '').toUpperCase()));
    assert.notEqual(recoveryCodeHash('u1', code!), recoveryCodeHash('u2', code!));
    assert.equal(typedRecoveryCode('too-short'), undefined);
  });
});

describe('the recovery-code step verifies a code, once', () => {
  let store: Store;
  const deps = () => ({ store, throttle: THROTTLE });
  before(async () => {
    store = await memoryStore();
  });
  after(() => store.close());

  /** A user with an authenticator app and its ten recovery codes. */
  async function withCodes(): Promise<{ user: User; codes: string[] }> {
    const user = await newUser(store);
    const codes = newRecoveryCodes();
    const credential = {
      userId: user.id,
      secretEnc: 'unused.by.this.test',
      lastStep: 0,
      createdAt: 0,
      lastUsedAt: null,
    };
    const hashes = codes.map((c) => recoveryCodeHash(user.id, c));
    assert.equal(await store.enrolTotp(credential, hashes, enrolledEvent(user.id)), true);
    return { user, codes };
  }
  const use = (user: User, code: string, now = NOW) =>
    recoveryCodeStep.verify(deps(), attempt({ code }, { user, now }));

  it('a code signs in once: no amr value of its own; the same code again is refused', async () => {
    const { user, codes } = await withCodes();
    assert.deepEqual(await use(user, codes[0]!), {
      kind: 'verified',
      user,
      factor: { method: 'recovery-code', amr: [], at: NOW },
    });
    assert.deepEqual(await use(user, codes[0]!, NOW + 1), { kind: 'failed', reason: 'wrong_code' });
    // Typed otherwise, the next code works too; nine minus one are left.
    assert.equal((await use(user, codes[1]!.toUpperCase().replace(/-/g, ''))).kind, 'verified');
    assert.equal((await store.recoveryCodeSummary(user.id)).unused, 8);
  });

  it('of two requests with one code, one signs in', async () => {
    const { user, codes } = await withCodes();
    const both = await Promise.all([use(user, codes[2]!), use(user, codes[2]!)]);
    assert.deepEqual(both.map((v) => v.kind).sort(), ['failed', 'verified']);
  });

  it("another user's code, a malformed one, and a step with no user named before it are refused", async () => {
    const ada = await withCodes();
    const bob = await withCodes();
    assert.deepEqual(await use(bob.user, ada.codes[3]!), { kind: 'failed', reason: 'wrong_code' });
    assert.deepEqual(await use(bob.user, 'not-a-code'), { kind: 'failed', reason: 'wrong_code' });
    assert.equal((await recoveryCodeStep.verify(deps(), attempt({ code: ada.codes[3]! }))).kind, 'failed');
    // Still unused: the refusals spent nothing.
    assert.equal((await use(ada.user, ada.codes[3]!)).kind, 'verified');
  });

  it('is enrolled only beside a second factor it stands in for', async () => {
    const { user } = await withCodes();
    assert.equal(await recoveryCodeStep.enrolled(user, store), true);
    assert.equal(await recoveryCodeStep.enrolled(await newUser(store), store), false);
  });
});
