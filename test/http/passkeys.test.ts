// Passkeys at the server, over HTTP, answered by a software authenticator of the test's own
// (test/helpers/authenticator.ts): what a sign-in with a passkey gives (amr, acr, read by
// openid-client), and what is refused: an answer made for another origin, a challenge answered twice,
// given to another browser or expired, a missing user verification, a counter gone back, an unknown
// passkey. Chromium with its virtual authenticator drives the pages in passkeys-browser.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { PAGE_CSP } from '../../src/http/plugins/html.ts';
import { hashToken } from '../../src/tokens/opaque.ts';
import { changeUserRoles } from '../../src/admin/roles.ts';
import { ADMIN_ROLE } from '../../src/store/users.ts';
import { SoftAuthenticator } from '../helpers/authenticator.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { addPasskey, newUser, pageOptions, passkeySignIn, passwordSignIn, signedIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const PHR = ACR_VALUES[2];

describe('passkeys at the server', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ host: 'localhost' });
  });
  after(() => server.close());

  /** A user with a password and one passkey of `authenticator`, added from the account page. */
  async function enrolled(authenticator = new SoftAuthenticator({ origin: server.issuer })) {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(browser, user)).headers.get('location'), '/account');
    const added = await addPasskey(browser, authenticator);
    assert.equal(added.headers.get('location'), '/account?passkey=added#passkeys');
    return { user, authenticator };
  }

  async function failures(userId: string | null) {
    const events = await server.store.listEvents({ type: 'user.sign_in_failed', limit: 100 });
    return events.filter((e) => e.userId === userId && e.data?.method === 'passkey').map((e) => e.data!.reason);
  }

  it('a passkey signs in without a password: amr hwk and user, two factors, phishing-resistant', async () => {
    const { user, authenticator } = await enrolled();
    const c = server.clients.confidential;
    const config = await client.discovery(
      new URL(server.issuer),
      c.id,
      c.secret!,
      client.ClientSecretBasic(c.secret!),
      { execute: [client.allowInsecureRequests] },
    );
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const url = client.buildAuthorizationUrl(config, { redirect_uri: c.redirectUri, scope: 'openid', state, nonce });
    const browser = new BrowserSim(server.issuer);
    const login = (await browser.request(url.href)).headers.get('location')!;
    const page = await (await browser.request(login)).text();
    // The sign-in page offers the passkey to the username field's autofill and as a button.
    assert.match(page, /autocomplete="username webauthn"/);
    assert.match(page, />Sign in with a passkey</);
    const options = pageOptions(page, 'sign-in');
    assert.equal(options.rpId, 'localhost');
    assert.equal(options.userVerification, 'required');
    assert.equal(options.allowCredentials, undefined, 'discoverable: the passkey names the user');
    const response = JSON.stringify(authenticator.authenticate(options));
    const form = {
      interaction: BrowserSim.hidden(page, 'interaction'),
      csrf: BrowserSim.hidden(page, 'csrf'),
      response,
    };
    const consent = await browser.request('/login/passkey', { form });
    assert.equal(consent.status, 303);
    const callback = new URL(
      (await browser.consent(consent.headers.get('location')!, 'allow')).headers.get('location')!,
    );
    const tokens = await client.authorizationCodeGrant(config, callback, {
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims()!;
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.acr, PHR);
    const [signIn] = await server.store.listEvents({ userId: user.id, type: 'user.signed_in', limit: 1 });
    assert.equal(signIn?.clientId, c.id);
  });

  it('a synced passkey (backup eligible) says swk', async () => {
    const { authenticator } = await enrolled(new SoftAuthenticator({ origin: server.issuer, backupEligible: true }));
    const browser = new BrowserSim(server.issuer);
    const { response } = await passkeySignIn(browser, (o) => authenticator.authenticate(o));
    assert.equal(response.headers.get('location'), '/account');
    assert.deepEqual(
      (await factorsOf(browser)).map((f) => f.amr),
      [['swk', 'user']],
    );
  });

  it('an answer made on another origin is refused, though signed by the right passkey', async () => {
    const { user, authenticator } = await enrolled();
    const browser = new BrowserSim(server.issuer);
    const lookAlike = server.issuer.replace('localhost', 'localhost.example');
    const { response } = await passkeySignIn(browser, (o) => authenticator.authenticate(o, { origin: lookAlike }));
    assert.equal(response.headers.get('location'), '/account/login?error=passkey_failed');
    assert.equal(await signedIn(browser), false);
    assert.deepEqual(await failures(user.id), ['wrong_origin']);
    const page = await (await browser.request('/account/login?error=passkey_failed')).text();
    assert.match(page, /role="alert">That passkey could not sign you in/);
  });

  it('a challenge is answered once: the same answer again is refused', async () => {
    const { user, authenticator } = await enrolled(new SoftAuthenticator({ origin: server.issuer, counts: false }));
    const browser = new BrowserSim(server.issuer);
    const { response, form } = await passkeySignIn(browser, (o) => authenticator.authenticate(o));
    assert.equal(response.headers.get('location'), '/account');
    // Replayed in the same browser (signed out), within the challenge's life, by an authenticator
    // that keeps no counter: only the challenge's single use stands in the way.
    browser.cookies.delete('tessera_session');
    const again = await browser.request('/login/passkey', { form: { ...form, csrf: await csrfOf(browser) } });
    assert.equal(again.headers.get('location'), '/account/login?error=passkey_expired');
    assert.equal(await signedIn(browser), false);
    assert.deepEqual(await failures(user.id), ['replayed']);
  });

  it('a challenge given to another browser, or expired, is refused before anything is recorded', async () => {
    const { user, authenticator } = await enrolled();
    const other = new BrowserSim(server.issuer);
    const page = await (await other.request('/account/login')).text();
    const answer = JSON.stringify(authenticator.authenticate(pageOptions(page, 'sign-in')));
    const browser = new BrowserSim(server.issuer);
    const form = { interaction: '', csrf: await csrfOf(browser), response: answer };
    const elsewhere = await browser.request('/login/passkey', { form });
    assert.equal(elsewhere.headers.get('location'), '/account/login?error=passkey_expired');
    server.clock.offset = 11 * 60;
    try {
      const late = await other.request('/login/passkey', { form: { ...form, csrf: await csrfOf(other) } });
      assert.equal(late.headers.get('location'), '/account/login?error=passkey_expired');
    } finally {
      server.clock.offset = 0;
    }
    assert.equal(await signedIn(browser), false);
    assert.equal(await signedIn(other), false);
    assert.deepEqual(await failures(user.id), []);
  });

  it('without a password the passkey must verify the user; a counter gone back and a stranger are refused', async () => {
    const { user, authenticator } = await enrolled();
    const browser = new BrowserSim(server.issuer);
    // Signed in once, the counter stored is past 1.
    assert.equal((await passkeySignIn(browser, (o) => authenticator.authenticate(o))).response.status, 303);
    assert.equal(await signedIn(browser), true);
    browser.cookies.delete('tessera_session');
    const unverified = await passkeySignIn(browser, (o) => authenticator.authenticate(o, { userVerified: false }));
    assert.equal(unverified.response.headers.get('location'), '/account/login?error=passkey_failed');
    const back = await passkeySignIn(browser, (o) => authenticator.authenticate(o, { counter: 1 }));
    assert.equal(back.response.headers.get('location'), '/account/login?error=passkey_failed');
    assert.equal(await signedIn(browser), false);
    assert.deepEqual((await failures(user.id)).sort(), ['counter', 'user_not_verified']);
    const stranger = new SoftAuthenticator({ origin: server.issuer });
    stranger.register({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'nobody' } });
    const unknown = await passkeySignIn(browser, (o) => stranger.authenticate(o));
    assert.equal(unknown.response.headers.get('location'), '/account/login?error=passkey_failed');
    assert.ok((await failures(null)).includes('unknown_passkey'));
    // Nonsense in the form is a failure too, never a 500.
    const page = await (await browser.request('/account/login')).text();
    const csrf = BrowserSim.hidden(page, 'csrf');
    for (const response of [
      '',
      'not json',
      '{"id":"x"}',
      JSON.stringify({ ...authenticator.authenticate({ challenge: 'x', rpId: 'localhost' }), type: 1 }),
    ]) {
      const answer = await browser.request('/login/passkey', { form: { interaction: '', csrf, response } });
      assert.equal(answer.status, 303, response);
    }
  });

  it('after a password, a passkey without user verification is the second factor: pwd, hwk, user, mfa', async () => {
    const { user, authenticator } = await enrolled();
    const browser = new BrowserSim(server.issuer);
    const next = (await passwordSignIn(browser, user)).headers.get('location')!;
    assert.match(next, /^\/login\/passkey\?pending=/);
    assert.equal(await signedIn(browser), false, 'half a sign-in is no session');
    const page = await (await browser.request(next)).text();
    const options = pageOptions(page, 'confirm');
    assert.equal(options.userVerification, 'preferred');
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [Buffer.from(authenticator.credentials[0]!.id).toString('base64url')],
    );
    const response = JSON.stringify(authenticator.authenticate(options, { userVerified: false }));
    const form = { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf'), response };
    const done = await browser.request('/login/passkey', { form });
    assert.equal(done.headers.get('location'), '/account');
    assert.deepEqual(
      (await factorsOf(browser)).map((f) => [f.method, f.amr]),
      [
        ['password', ['pwd']],
        ['passkey', ['hwk', 'user']],
      ],
    );
  });

  it('pages with passkeys load scripts of our own only; without a domain (an IP address) there are none', async () => {
    const browser = new BrowserSim(server.issuer);
    const login = await browser.request('/account/login');
    assert.equal(login.headers.get('content-security-policy'), PAGE_CSP);
    assert.match(PAGE_CSP, /script-src 'self'/);
    const page = await login.text();
    assert.deepEqual(
      [...page.matchAll(/<script[^>]*>/g)].map(([tag]) => tag),
      ['<script src="/assets/simplewebauthn-browser.js" defer>', '<script src="/assets/passkeys.js" defer>'],
    );
    for (const path of ['/assets/simplewebauthn-browser.js', '/assets/passkeys.js']) {
      const script = await browser.request(path);
      assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.match(await script.text(), path.includes('simplewebauthn') ? /startAuthentication/ : /data-passkey/);
    }
    const byAddress = await startServer();
    try {
      const plain = await (await new BrowserSim(byAddress.issuer).request('/account/login')).text();
      assert.doesNotMatch(plain, /passkey|<script/);
      assert.match(plain, /autocomplete="username"/);
    } finally {
      await byAddress.close();
    }
  });

  /** The factors of `browser`'s session, as stored. */
  async function factorsOf(browser: BrowserSim) {
    const id = hashToken(browser.cookies.get('tessera_session')!);
    return (await server.store.getSessionAndUser(id, Math.floor(Date.now() / 1000)))?.session.factors ?? [];
  }
  async function csrfOf(browser: BrowserSim) {
    return BrowserSim.hidden(await (await browser.request('/account/login')).text(), 'csrf');
  }

  it("the admin console's sign-in page: a passkey signs an admin in, and back to the console", async () => {
    const { user, authenticator } = await enrolled();
    await changeUserRoles(server.store, user.username, { add: [ADMIN_ROLE] }, { now: Math.floor(Date.now() / 1000) });
    const browser = new BrowserSim(server.issuer);
    assert.equal((await browser.request('/admin/users')).headers.get('location'), '/admin/login');
    const page = await (await browser.request('/admin/login')).text();
    const form = {
      interaction: BrowserSim.hidden(page, 'interaction'),
      csrf: BrowserSim.hidden(page, 'csrf'),
      response: JSON.stringify(authenticator.authenticate(pageOptions(page, 'sign-in'))),
    };
    assert.equal(form.interaction, 'console');
    const signedInThere = await browser.request('/login/passkey', { form });
    assert.equal(signedInThere.status, 303);
    assert.equal(signedInThere.headers.get('location'), '/admin');
    // A passkey is two factors: TESSERA_ADMIN_MFA=required has nothing more to ask.
    assert.equal((await browser.request('/admin/users')).status, 200);
  });
});
