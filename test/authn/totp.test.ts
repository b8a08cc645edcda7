// The authenticator-app step (src/authn/totp/): RFC 6238's codes, and the step's verification against
// a real store: RFC 6238 appendix B's vectors accepted at their times, one step of clock skew either
// way and no more, each time step accepted once (an older one after it neither), a malformed code and
// a step without a user refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { base32Decode, base32Encode, matchingStep, timeStep, totpCode } from '../../src/authn/totp/code.ts';
import { totpStep } from '../../src/authn/totp/step.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { encryptAtRest } from '../../src/tokens/at-rest.ts';
import { attempt, enrolledEvent, memoryStore, newUser, NOW, THROTTLE } from './factors-store.ts';

/** RFC 6238 appendix B: the SHA-1 key, and (time, code) to six digits. */
const KEY = Buffer.from('12345678901234567890');
const VECTORS: Array<[number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('TOTP codes (RFC 6238)', () => {
  it("appendix B's SHA-1 vectors, to six digits; base32 both ways", () => {
    for (const [time, code] of VECTORS) assert.equal(totpCode(KEY, timeStep(time)), code, `T=${time}`);
    assert.equal(base32Encode(KEY), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    assert.deepEqual(base32Decode('gezd gnbv-gy3tqojq gezdgnbvgy3tqojq'), KEY);
    assert.equal(base32Decode('not base32!'), undefined);
  });
  it('a code is accepted one step either side, no further', () => {
    const secret = base32Encode(KEY);
    const at = (t: number) => totpCode(KEY, timeStep(t));
    assert.equal(matchingStep(secret, at(NOW), NOW), timeStep(NOW));
    assert.equal(matchingStep(secret, at(NOW - 30), NOW), timeStep(NOW) - 1);
    assert.equal(matchingStep(secret, at(NOW + 30), NOW), timeStep(NOW) + 1);
    assert.equal(matchingStep(secret, at(NOW - 60), NOW), undefined);
    assert.equal(matchingStep(secret, at(NOW + 60), NOW), undefined);
  });
});

describe('the authenticator-app step verifies a code', () => {
  const secrets = 'totp-test-secret-'.padEnd(43, 'x');
  let store: Store;
  const deps = () => ({ store, throttle: THROTTLE, secrets });
  before(async () => {
    store = await memoryStore();
  });
  after(() => store.close());

  /** A user with the RFC's key in their app. */
  async function enrolled(): Promise<User> {
    const user = await newUser(store);
    const secretEnc = encryptAtRest(secrets, 'totpSecret', base32Encode(KEY));
    const credential = { userId: user.id, secretEnc, lastStep: 0, createdAt: 0, lastUsedAt: null };
    assert.equal(await store.enrolTotp(credential, [], enrolledEvent(user.id)), true);
    return user;
  }
  const code = (user: User, value: string, now: number) =>
    totpStep.verify(deps(), attempt({ code: value }, { user, now }));

  it("RFC 6238 appendix B's vectors, each at its time: the factor `otp`, of that time", async () => {
    const user = await enrolled();
    for (const [time, value] of VECTORS) {
      assert.deepEqual(await code(user, value, time), {
        kind: 'verified',
        user,
        factor: { method: 'totp', amr: ['otp'], at: time },
      });
    }
  });

  it('one step of skew either way, each step once; an older step after a newer one, or two away, refused', async () => {
    const user = await enrolled();
    const at = (t: number) => totpCode(KEY, timeStep(t));
    assert.equal((await code(user, at(NOW - 30), NOW)).kind, 'verified', 'the step before');
    assert.equal((await code(user, at(NOW), NOW)).kind, 'verified', 'the step now');
    assert.deepEqual(await code(user, at(NOW), NOW), { kind: 'failed', reason: 'replayed' }, 'the same step again');
    assert.deepEqual(await code(user, at(NOW - 30), NOW), { kind: 'failed', reason: 'replayed' }, 'an older one');
    assert.deepEqual(await code(user, at(NOW + 60), NOW), { kind: 'failed', reason: 'wrong_code' }, 'two ahead');
    assert.deepEqual(await code(user, at(NOW - 60), NOW), { kind: 'failed', reason: 'wrong_code' }, 'two behind');
    assert.equal((await code(user, `${at(NOW + 30).slice(0, 3)} ${at(NOW + 30).slice(3)}`, NOW)).kind, 'verified');
  });

  it('of two requests with one code, one is accepted', async () => {
    const user = await enrolled();
    const value = totpCode(KEY, timeStep(NOW));
    const both = await Promise.all([code(user, value, NOW), code(user, value, NOW)]);
    assert.deepEqual(both.map((v) => v.kind).sort(), ['failed', 'verified']);
  });

  it('refuses a malformed code, a user without an app, and a step with no user named before it', async () => {
    const user = await enrolled();
    assert.deepEqual(await code(user, '12ab56', NOW), { kind: 'failed', reason: 'wrong_code' });
    assert.deepEqual(await code(user, '', NOW), { kind: 'failed', reason: 'wrong_code' });
    const without = await newUser(store);
    assert.deepEqual(await code(without, totpCode(KEY, timeStep(NOW)), NOW), { kind: 'failed', reason: 'wrong_code' });
    const nobody = await totpStep.verify(deps(), attempt({ code: totpCode(KEY, timeStep(NOW)) }));
    assert.equal(nobody.kind, 'failed');
    assert.equal(await totpStep.enrolled(user, store), true);
    assert.equal(await totpStep.enrolled(without, store), false);
  });
});
