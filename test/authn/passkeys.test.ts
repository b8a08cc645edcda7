// The passkey step (src/authn/passkeys/step.ts) verifies assertions recorded once from the software
// authenticator (../fixtures/passkeys/record.ts, ../fixtures/passkeys/assertions.json) against a real
// store: alone with user verification it signs the passkey's user in; as a later step it must be of
// the user named before; a challenge answers once; a counter gone back, a missing user verification,
// another origin, another browser, a changed signature and a disabled user are refused.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, beforeEach, describe, it } from 'node:test';
import { RelyingParty } from '../../src/authn/passkeys/relying-party.ts';
import { passkeyStep } from '../../src/authn/passkeys/step.ts';
import { securityEvent } from '../../src/events/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { attempt, memoryStore, newUser } from './factors-store.ts';

/** What startAuthentication returns, as recorded. */
type Assertion = { id: string; rawId: string; response: Record<string, string> } & Record<string, unknown>;
interface Fixture {
  issuer: string;
  secret: string;
  now: number;
  browser: string;
  user: { id: string; username: string };
  passkey: {
    credentialId: string;
    publicKey: string;
    counter: number;
    transports: string[];
    backupEligible: boolean;
    backedUp: boolean;
  };
  assertions: Record<'first' | 'later' | 'counterBack' | 'unverified' | 'otherOrigin', Assertion>;
}
const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/passkeys/assertions.json', import.meta.url), 'utf8'),
) as Fixture;
const { assertions } = fixture;

describe('the passkey step verifies recorded assertions', () => {
  const relyingParty = new RelyingParty(fixture.issuer, fixture.secret);
  let store: Store;
  let user: User;
  const stores: Store[] = [];
  after(() => Promise.all(stores.map((s) => s.close())));

  // A store per test: each starts from the registered passkey, its counter at 0.
  beforeEach(async () => {
    store = await memoryStore();
    stores.push(store);
    user = await newUser(store, { id: fixture.user.id, username: fixture.user.username });
    const { passkey } = fixture;
    const added = await store.addPasskey(
      {
        ...passkey,
        id: 'pk1',
        userId: user.id,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        name: 'Laptop',
        createdAt: fixture.now,
        lastUsedAt: null,
        suspendedAt: null,
      },
      securityEvent('passkey.added', fixture.now, { userId: user.id }),
    );
    assert.equal(added, true);
  });

  const verify = (response: Assertion | string, over: Parameters<typeof attempt>[1] = {}) =>
    passkeyStep.verify(
      { store, relyingParty },
      attempt(
        { response: typeof response === 'string' ? response : JSON.stringify(response) },
        { isBound: (browser) => browser === fixture.browser, now: fixture.now + 5, ...over },
      ),
    );
  const reason = async (...args: Parameters<typeof verify>) => {
    const verified = await verify(...args);
    return verified.kind === 'failed' ? verified.reason : verified.kind;
  };

  it("alone, user verified: the passkey's user, factor hwk and user (bound to its device); once only", async () => {
    assert.deepEqual(await verify(assertions.first), {
      kind: 'verified',
      user,
      factor: { method: 'passkey', amr: ['hwk', 'user'], at: fixture.now + 5 },
    });
    assert.equal(await reason(assertions.first), 'replayed', 'the same challenge again');
  });

  it('a later step: only of the user named before, with or without user verification', async () => {
    const other = await newUser(store);
    assert.equal(await reason(assertions.later, { user: other }), 'challenge', "another user's sign-in");
    assert.equal(await reason(assertions.later), 'challenge', 'a later step posted as a first');
    assert.equal((await verify(assertions.later, { user })).kind, 'verified');
    assert.equal(await reason(assertions.first, { user }), 'challenge', "a first step's challenge");
  });

  it('the counter must move forward: 1, then 2, then 1 again is refused', async () => {
    assert.equal((await verify(assertions.first)).kind, 'verified');
    assert.equal((await verify(assertions.later, { user })).kind, 'verified');
    assert.equal(await reason(assertions.counterBack), 'counter');
  });

  it('refuses no user verification alone, another origin, another browser, a late answer, a changed signature', async () => {
    assert.equal(await reason(assertions.unverified), 'user_not_verified');
    assert.equal(await reason(assertions.otherOrigin), 'wrong_origin');
    assert.equal(await reason(assertions.first, { isBound: () => false }), 'challenge');
    assert.equal(await reason(assertions.first, { now: fixture.now + 11 * 60 }), 'challenge', 'expired');
    const signature = Buffer.from(assertions.first.response.signature!, 'base64url');
    signature[signature.length - 1]! ^= 1;
    const changed = {
      ...assertions.first,
      response: { ...assertions.first.response, signature: signature.toString('base64url') },
    };
    assert.equal(await reason(changed), 'invalid');
    assert.equal(await reason('{"not":"an assertion"}'), 'malformed');
  });

  it("refuses a disabled user's passkey, and one the store does not know", async () => {
    const unknown = { ...assertions.later, id: 'AAAA', rawId: 'AAAA' };
    assert.equal(await reason(unknown, { user }), 'unknown_passkey');
    assert.equal(await store.setUserDisabled(user.id, true, fixture.now), true);
    assert.equal(await reason(assertions.first), 'disabled');
  });
});
