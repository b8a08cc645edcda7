// A password reset's sign-in is no session until the new password is set: a reset link followed by
// the user's authenticator code lets that browser choose a password and nothing else; an
// authorization request from it gets the sign-in page, not a code, and the account page asks for a
// sign-in. Once the password is chosen the browser is signed in with the link and the code (two
// factors), and the old password and sessions are gone. A user without a second factor likewise.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { linkTokenHash } from '../../src/authn/mail-link/tokens.ts';
import { BrowserSim, unescapeHtml } from '../helpers/browser-sim.ts';
import { Mailbox } from '../helpers/mailbox.ts';
import { newUser, passwordSignIn, signedIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

const CHOSEN = 'a brand new passphrase 42';

describe('a reset is no session before its new password', () => {
  let server: TestServer;
  let mailbox: Mailbox;
  before(async () => {
    server = await startServer();
    mailbox = new Mailbox(server);
  });
  after(async () => {
    await mailbox?.close();
    await server?.close();
  });

  const codeOf = (totp: OTPAuth.TOTP) => totp.generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });

  /** A user with an authenticator app, enrolled from the account page; the app. */
  async function withApp() {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const page = await (await browser.request('/account')).text();
    const uri = unescapeHtml(/<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)![1]!);
    const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), enrolment: BrowserSim.hidden(page, 'enrolment') };
    assert.equal((await browser.request('/account/totp', { form: { ...form, code: codeOf(totp) } })).status, 200);
    // The next code is another one (a code works once).
    server.clock.offset += 30;
    return { user, totp, old: browser };
  }

  /** Asks for a reset of `username`; the link of the mail sent to its address. */
  async function resetLink(username: string): Promise<string> {
    const browser = new BrowserSim(server.issuer);
    const page = await (await browser.request('/reset/request')).text();
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), identifier: username };
    assert.equal((await browser.request('/reset/request', { form })).status, 200);
    return mailbox.link(`${username}@example.com`);
  }

  /** An authorization request of the first-party client (no consent page) from `browser`: where it goes. */
  async function authorize(browser: BrowserSim): Promise<URL> {
    const c = server.clients.firstParty;
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 'st',
      nonce: 'n',
    });
    const response = await browser.request(`/oauth2/authorize?${query}`);
    assert.equal(response.status, 302);
    return new URL(response.headers.get('location')!, server.issuer);
  }

  async function idTokenClaims(code: string) {
    const c = server.clients.firstParty;
    const form = { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri };
    const response = await tokenRequest(server, form, basic(c.id, c.secret!));
    assert.equal(response.status, 200);
    const { id_token } = (await response.json()) as { id_token: string };
    return JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()) as { acr: string; amr: string[] };
  }

  it('the link and the code give no session a client accepts until the password is chosen', async () => {
    const { user, totp, old } = await withApp();
    const link = await resetLink(user.username);
    const browser = new BrowserSim(server.issuer);
    const opened = await browser.request(link);
    assert.equal(opened.status, 303);
    const step = opened.headers.get('location')!;
    assert.match(step, /^\/login\/totp\?pending=/);
    const page = await (await browser.request(step)).text();
    const form = { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf') };
    const coded = await browser.request('/login/totp', { form: { ...form, code: codeOf(totp) } });
    assert.equal(coded.status, 303);

    // The attack: with the link and the code, and no password chosen, a client asks for a code.
    const asked = await authorize(browser);
    assert.equal(asked.pathname, '/login', 'the sign-in page, not a code');
    assert.equal(asked.searchParams.get('code'), null);
    assert.equal(await signedIn(browser), false, 'no session for the account page either');
    // The old session still stands until the password is set.
    assert.equal(await signedIn(old), true);
    const choose = coded.headers.get('location')!;
    assert.match(choose, /^\/reset\/password\?reset=[0-9a-f]{64}&pending=/);

    // The honest end: the password chosen, then the browser is signed in with the link and the code.
    const choosing = await (await browser.request(choose)).text();
    const fields = {
      csrf: BrowserSim.hidden(choosing, 'csrf'),
      reset: BrowserSim.hidden(choosing, 'reset'),
      pending: BrowserSim.hidden(choosing, 'pending'),
    };
    const done = await browser.request('/reset/password', { form: { ...fields, password: CHOSEN, confirm: CHOSEN } });
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), '/account?password=changed');
    assert.equal(await signedIn(old), false, 'every other session ended');
    const callback = await authorize(browser);
    const code = callback.searchParams.get('code');
    assert.ok(code, `a code now: ${callback.href}`);
    const claims = await idTokenClaims(code);
    assert.equal(claims.acr, ACR_VALUES[1], 'two factors: the link and the code');
    assert.deepEqual(claims.amr.sort(), ['mfa', 'otp']);
    // The held sign-in is spent with the reset: its page no longer opens.
    assert.equal((await browser.request(choose)).status, 400);
    // The new password signs in, and the app is asked after it, as before.
    const next = await passwordSignIn(new BrowserSim(server.issuer), { ...user, password: CHOSEN });
    assert.match(next.headers.get('location')!, /^\/login\/totp\?pending=/);
  });

  it('the held sign-in opens only in the browser it was made in, and only for its reset', async () => {
    const { user, totp } = await withApp();
    const browser = new BrowserSim(server.issuer);
    const step = (await browser.request(await resetLink(user.username))).headers.get('location')!;
    const page = await (await browser.request(step)).text();
    const form = { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf') };
    const choose = (await browser.request('/login/totp', { form: { ...form, code: codeOf(totp) } })).headers.get(
      'location',
    )!;
    const elsewhere = new BrowserSim(server.issuer);
    assert.equal((await elsewhere.request(choose)).status, 400, 'another browser: the link is dead there');
    // A reset of another user's, open too: this sign-in is not for it.
    const other = new URL(await resetLink((await withApp()).user.username), server.issuer).searchParams.get('token')!;
    const swapped = choose.replace(/reset=[0-9a-f]{64}/, `reset=${linkTokenHash(other)}`);
    assert.equal((await browser.request(swapped)).status, 400, 'another reset: refused');
    assert.equal((await browser.request(choose)).status, 200);
  });

  it('a user without a second factor: the link, the password, then a one-factor session', async () => {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    const link = await resetLink(user.username);
    const page = await (await browser.request(link)).text();
    assert.equal(await signedIn(browser), false);
    const form = { csrf: BrowserSim.hidden(page, 'csrf'), token: BrowserSim.hidden(page, 'token') };
    const done = await browser.request('/reset', { form: { ...form, password: CHOSEN, confirm: CHOSEN } });
    assert.equal(done.headers.get('location'), '/account?password=changed');
    const code = (await authorize(browser)).searchParams.get('code');
    assert.ok(code);
    const claims = await idTokenClaims(code);
    assert.equal(claims.acr, ACR_VALUES[0], 'the link alone: one factor (the password chosen is none)');
  });
});
