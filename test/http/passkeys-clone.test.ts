// A cloned passkey over HTTP (W3C WebAuthn §6.1.1, §7.2 step 21), the copy played by the software
// authenticator (../helpers/authenticator.ts) sending the same credential's signature with a counter
// of its own: once a validly signed counter goes back, the passkey is suspended with one
// `passkey.suspended` event, and refused from then on, whichever copy signs and however far its
// counter runs ahead; the user signs in with their other factors as if it were gone, the account page
// shows it suspended, and they remove it. Side by side: a made-up assertion with a low counter but no
// valid signature suspends nothing, and an authenticator that keeps no counter (always 0) is never
// taken for a copy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SoftAuthenticator } from '../helpers/authenticator.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { addPasskey, newUser, passkeySignIn, passwordSignIn, signedIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const FAILED = '/account/login?error=passkey_failed';

describe('a passkey whose counter goes back is suspended', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ host: 'localhost' });
  });
  after(() => server?.close());

  async function enrolled(authenticator = new SoftAuthenticator({ origin: server.issuer })) {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    const added = await addPasskey(browser, authenticator, { name: 'Laptop' });
    assert.equal(added.headers.get('location'), '/account?passkey=added#passkeys');
    const [passkey] = await server.store.listPasskeys(user.id);
    return { user, authenticator, passkey: passkey! };
  }

  /** A sign-in with the passkey alone in a new browser, answered by `answer`: where it went. */
  async function passkeyOnly(answer: (options: never) => unknown) {
    const browser = new BrowserSim(server.issuer);
    const { response } = await passkeySignIn(browser, answer);
    return response.headers.get('location');
  }

  async function failures(userId: string) {
    const events = await server.store.listEvents({ type: 'user.sign_in_failed', userId, limit: 100 });
    return events.map((e) => e.data?.reason).reverse();
  }

  it('a copy whose counter is behind suspends it; no copy gets in afterwards, ahead or not', async () => {
    const { user, authenticator, passkey } = await enrolled();
    // The owner signs in twice: the counter stored is 2.
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
    // The copy, made when the counter was 1, signs with 2 (not past the stored one): refused, suspended.
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o, { counter: 2 })), FAILED);
    const stored = (await server.store.listPasskeys(user.id))[0]!;
    assert.ok(stored.suspendedAt !== null, 'suspended');
    const events = await server.store.listEvents({ type: 'passkey.suspended', userId: user.id });
    assert.deepEqual(
      events.map((e) => e.data),
      [{ passkey: passkey.id, name: 'Laptop' }],
    );
    // Its next tries run ahead of the stored counter (3, then 10): refused all the same, and so is the owner's.
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o, { counter: 3 })), FAILED);
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o, { counter: 10 })), FAILED);
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), FAILED);
    assert.deepEqual(await failures(user.id), ['counter', 'suspended', 'suspended', 'suspended']);
    assert.equal((await server.store.listPasskeys(user.id))[0]!.counter, 2, 'nothing recorded of those uses');
    assert.equal((await server.store.listEvents({ type: 'passkey.suspended', userId: user.id })).length, 1);

    // The owner signs in with the password alone (the passkey is no step of theirs now), sees it
    // suspended on the account page, and removes it.
    const browser = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    const page = await (await browser.request('/account')).text();
    assert.match(page, /role="alert">Suspended on [^<]+: its signature counter went back/);
    const csrf = BrowserSim.hidden(page, 'csrf');
    const removed = await browser.request('/account/passkeys/remove', { form: { csrf, id: passkey.id } });
    assert.equal(removed.headers.get('location'), '/account?passkey=removed#passkeys');
    assert.deepEqual(await server.store.listPasskeys(user.id), []);
  });

  it('a made-up assertion with a low counter, not validly signed, suspends nothing', async () => {
    const { user, authenticator } = await enrolled();
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
    const forged = await passkeyOnly((o) => {
      const answer = authenticator.authenticate(o, { counter: 1 });
      const signature = Buffer.from(answer.response.signature, 'base64url');
      signature[signature.length - 1]! ^= 1;
      return { ...answer, response: { ...answer.response, signature: signature.toString('base64url') } };
    });
    assert.equal(forged, FAILED);
    assert.deepEqual(await failures(user.id), ['invalid']);
    assert.equal((await server.store.listPasskeys(user.id))[0]!.suspendedAt, null);
    // The owner's passkey still signs in.
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
  });

  it('an authenticator that keeps no counter (always 0) is never taken for a copy', async () => {
    const { user, authenticator } = await enrolled(new SoftAuthenticator({ origin: server.issuer, counts: false }));
    for (let i = 0; i < 3; i++) assert.equal(await passkeyOnly((o) => authenticator.authenticate(o)), '/account');
    assert.deepEqual(await failures(user.id), []);
    assert.equal((await server.store.listPasskeys(user.id))[0]!.suspendedAt, null);
  });

  it('after a password, a suspended passkey is not asked for; another passkey of the user still is', async () => {
    const { user, authenticator } = await enrolled();
    const second = new SoftAuthenticator({ origin: server.issuer });
    const browser = new BrowserSim(server.issuer);
    assert.equal((await passkeySignIn(browser, (o) => authenticator.authenticate(o))).response.status, 303);
    assert.equal(await signedIn(browser), true);
    assert.equal((await addPasskey(browser, second, { name: 'Key' })).status, 303);
    assert.equal(await passkeyOnly((o) => authenticator.authenticate(o, { counter: 1 })), FAILED);
    // The password, then a passkey: only the other one is offered to the browser.
    const other = new BrowserSim(server.issuer);
    const step = (await passwordSignIn(other, user)).headers.get('location')!;
    assert.match(step, /^\/login\/passkey\?pending=/);
    const [laptop, key] = await server.store.listPasskeys(user.id);
    assert.ok(laptop!.suspendedAt !== null && key!.suspendedAt === null);
    const page = await (await other.request(step)).text();
    assert.ok(!page.includes(laptop!.credentialId), 'the suspended passkey is not offered');
    assert.ok(page.includes(key!.credentialId));
  });
});
