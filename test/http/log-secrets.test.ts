// Nothing sealed or secret reaches a log line, at the most talkative level (trace): every page that
// carries a sealed value or a link's secret in its query is driven as a person would (an
// authorization request through a password and an authenticator code, a password reset with its
// code, sign-up, a change of address, an invitation), with wrong turns on the way (a wrong code,
// passwords that differ, a dead link, an unknown page, a provider's callback that fits no sign-in),
// and every value the server put in a URL (Location headers, links of pages and mails) is looked
// for in the log afterwards. The log did record those requests, their secrets redacted by name.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { Mailbox } from '../helpers/mailbox.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

const CHOSEN = 'a brand new passphrase 42';
const SEALED_OR_SECRET = ['pending', 'reset', 'token', 'interaction', 'code', 'state', 'id_token_hint', 'link'];

describe('no sealed or secret value in any log line', () => {
  let server: TestServer;
  let mailbox: Mailbox;
  const lines: string[] = [];
  /** Every secret value seen in a URL, a form or a mail. */
  const secrets = new Set<string>();

  before(async () => {
    server = await startServer({
      env: { LOG_LEVEL: 'trace', TESSERA_SIGNUP: 'open' },
      logStream: { write: (line) => void lines.push(line) },
    });
    mailbox = new Mailbox(server);
  });
  after(async () => {
    await mailbox?.close();
    await server?.close();
  });

  /** Remembers the secret values of a URL's query, then gives the URL back. */
  function seen(url: string | null): string {
    assert.ok(url, 'a URL');
    for (const [name, value] of new URL(url, server.issuer).searchParams) {
      if (SEALED_OR_SECRET.includes(name) && value.length >= 8) secrets.add(value);
    }
    return url;
  }

  /** A page's hidden field, remembered as a secret. */
  function hidden(page: string, name: string): string {
    const value = BrowserSim.hidden(page, name);
    if (value.length >= 8) secrets.add(value);
    return value;
  }

  const codeOf = (totp: OTPAuth.TOTP) => totp.generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });

  async function withApp() {
    const user = await newUser(server);
    const browser = new BrowserSim(server.issuer);
    await passwordSignIn(browser, user);
    const page = await (await browser.request('/account')).text();
    const uri = /<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    secrets.add(totp.secret.base32);
    const form = { csrf: hidden(page, 'csrf'), enrolment: hidden(page, 'enrolment'), code: codeOf(totp) };
    assert.equal((await browser.request('/account/totp', { form })).status, 200);
    server.clock.offset += 30;
    return { user, totp, browser };
  }

  /** The code step: a wrong code first, then the right one; the answer to the right one. */
  async function codeStep(browser: BrowserSim, location: string, totp: OTPAuth.TOTP) {
    const page = await (await browser.request(seen(location))).text();
    const form = { pending: hidden(page, 'pending'), csrf: hidden(page, 'csrf') };
    const right = codeOf(totp);
    const wrong = await browser.request('/login/totp', {
      form: { ...form, code: right === '000000' ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 400);
    return browser.request('/login/totp', { form: { ...form, code: right } });
  }

  it('an authorization request through a password and a code, then the tokens and a sign-out', async () => {
    const { user, totp } = await withApp();
    const browser = new BrowserSim(server.issuer);
    const c = server.clients.firstParty;
    const state = `state-${crypto.randomUUID()}`;
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      nonce: 'n-1',
    });
    const login = seen((await browser.request(`/oauth2/authorize?${query}`)).headers.get('location'));
    const page = await (await browser.request(login)).text();
    const form = { interaction: hidden(page, 'interaction'), csrf: hidden(page, 'csrf'), username: user.username };
    const failed = await browser.request('/login', { form: { ...form, password: 'not the password' } });
    seen(failed.headers.get('location'));
    const step = await browser.request('/login', { form: { ...form, password: user.password } });
    const callback = new URL(
      seen((await codeStep(browser, step.headers.get('location')!, totp)).headers.get('location')),
      server.issuer,
    );
    assert.equal(callback.searchParams.get('state'), state);
    const code = callback.searchParams.get('code')!;
    const tokens = (await (
      await tokenRequest(
        server,
        { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri },
        basic(c.id, c.secret!),
      )
    ).json()) as Record<string, string>;
    for (const value of Object.values(tokens)) if (typeof value === 'string' && value.length > 20) secrets.add(value);
    // The code again (refused), and a sign-out with the ID token as its hint.
    await tokenRequest(
      server,
      { grant_type: 'authorization_code', code, redirect_uri: c.redirectUri },
      basic(c.id, c.secret!),
    );
    const logout = new URLSearchParams({ id_token_hint: tokens.id_token!, state });
    seen((await browser.request(`/oauth2/logout?${logout}`)).headers.get('location') ?? '/');
  });

  it('a password reset with a second factor, wrong turns included', async () => {
    const { user, totp } = await withApp();
    const asker = new BrowserSim(server.issuer);
    const ask = await (await asker.request('/reset/request')).text();
    await asker.request('/reset/request', { form: { csrf: hidden(ask, 'csrf'), identifier: user.username } });
    const link = seen(await mailbox.link(`${user.username}@example.com`));
    const browser = new BrowserSim(server.issuer);
    const step = (await browser.request(link)).headers.get('location')!;
    const choose = seen((await codeStep(browser, step, totp)).headers.get('location'));
    const page = await (await browser.request(choose)).text();
    const form = { csrf: hidden(page, 'csrf'), reset: hidden(page, 'reset'), pending: hidden(page, 'pending') };
    const differ = await browser.request('/reset/password', { form: { ...form, password: CHOSEN, confirm: 'other' } });
    assert.equal(differ.status, 400);
    const done = await browser.request('/reset/password', { form: { ...form, password: CHOSEN, confirm: CHOSEN } });
    assert.equal(done.status, 303);
    // Used: each of its URLs again is a dead link.
    assert.equal((await browser.request(link)).status, 400);
    assert.equal((await browser.request(choose)).status, 400);
  });

  it('sign-up, a change of address and an invitation: the links of their mails', async () => {
    const browser = new BrowserSim(server.issuer);
    const signup = await (await browser.request('/signup')).text();
    const form = {
      csrf: hidden(signup, 'csrf'),
      username: 'newcomer',
      email: 'newcomer@example.org',
      password: CHOSEN,
    };
    assert.equal((await browser.request('/signup', { form })).status, 200);
    const confirm = seen(await mailbox.link('newcomer@example.org'));
    assert.equal((await browser.request(confirm)).status, 200);

    const user = await newUser(server);
    const signedIn = new BrowserSim(server.issuer);
    await passwordSignIn(signedIn, user);
    const account = await (await signedIn.request('/account')).text();
    const change = { csrf: hidden(account, 'csrf'), email: `moved-${user.username}@example.com` };
    assert.equal((await signedIn.request('/account/email', { form: change })).status, 303);
    const verify = seen(await mailbox.link(change.email));
    assert.equal((await signedIn.request(verify)).status, 200);

    const invited = cliIo(server);
    invited.io.env = { ...invited.io.env, TESSERA_ISSUER: server.issuer };
    assert.equal(await run(['users', 'invite', '--email', 'guest@example.net', '--username', 'guest'], invited.io), 0);
    const invitation = seen(await mailbox.link('guest@example.net'));
    const page = await (await browser.request(invitation)).text();
    const accept = { csrf: hidden(page, 'csrf'), token: hidden(page, 'token'), password: CHOSEN, confirm: 'differs' };
    assert.equal((await browser.request('/invite', { form: accept })).status, 400);
  });

  it('dead links, unknown pages and a provider callback that fits no sign-in', async () => {
    const browser = new BrowserSim(server.issuer);
    const made = (prefix: string) => `${prefix}${crypto.randomUUID().replace(/-/g, '')}`;
    const values = {
      token: made('tok'),
      pending: made('pen'),
      reset: 'ab'.repeat(32),
      state: made('sta'),
      code: made('cod'),
      interaction: made('int'),
      login_hint_token: made('lht'),
      request: made('req'),
    };
    for (const value of Object.values(values)) secrets.add(value);
    const q = (names: Array<keyof typeof values>) =>
      new URLSearchParams(names.map((n): [string, string] => [n, values[n]]));
    for (const url of [
      `/reset?${q(['token'])}`,
      `/verify?${q(['token'])}`,
      `/invite?${q(['token'])}`,
      `/signup/confirm?${q(['token'])}`,
      `/reset/password?${q(['reset', 'pending'])}`,
      `/login/totp?${q(['pending'])}`,
      `/login/passkey?${q(['pending'])}`,
      `/login?${q(['interaction'])}`,
      `/login/upstream/nowhere/callback?${q(['state', 'code'])}`,
      `/oauth2/authorize?${q(['request', 'login_hint_token', 'state'])}&client_id=none`,
      `/no/such/page?${q(['pending', 'token', 'reset', 'state'])}`,
      `/%zz?${q(['pending'])}`,
    ]) {
      const response = await browser.request(url);
      assert.ok(response.status >= 300 && response.status < 500, `${url}: ${response.status}`);
    }
  });

  it('the log recorded the requests, and none of their secrets', async () => {
    // The last lines are written as the answers go: wait for the stream to have them.
    const deadline = Date.now() + 5000;
    while (!lines.join('').includes('/no/such/page') && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const log = lines.join('');
    for (const name of ['pending', 'reset', 'token', 'interaction', 'code', 'state']) {
      assert.match(log, new RegExp(`${name}=%5Bredacted%5D`), `${name} was logged, redacted`);
    }
    assert.ok(secrets.size > 30, `secrets seen: ${secrets.size}`);
    for (const secret of secrets) {
      for (const form of new Set([
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ x: secret }).toString().slice(2),
      ])) {
        assert.equal(log.includes(form), false, `a log line carries ${secret.slice(0, 16)}…`);
      }
    }
  });
});
