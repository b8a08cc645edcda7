// The device authorization grant (RFC 8628) as a device and a person live it: openid-client's device
// functions (initiateDeviceAuthorization, pollDeviceAuthorizationGrant) on the device, the
// verification page in headless Chromium for the person: a person not signed in goes through the
// sign-in and comes back with the code; the code from verification_uri_complete is only prefilled, and
// nothing is approved before Allow; the page is axe-clean in every language and works without
// JavaScript; Deny reaches the device as access_denied; a code answered is not taken again; wrong
// codes are throttled per person and per code; the account page lists the device's client and
// withdrawing it ends its refresh token. One browser for the file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import * as client from 'openid-client';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createClient } from '../../src/admin/clients.ts';
import { LOCALES } from '../../src/i18n/index.ts';
import { DEVICE_CODE_GRANT } from '../../src/oauth/grant-types.ts';
import { userCodeHash } from '../../src/oauth/device/user-code.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

describe('the device grant with openid-client and the verification page in Chromium', { skip: needsChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  // The devices' polling ends with the file, whatever became of its test.
  const polls = new AbortController();
  let terminal: string;
  let television: { id: string; secret: string };

  before(async () => {
    server = await startServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const base = { redirectUris: [], scopes: ['openid', 'profile', 'email', 'apps'] };
    const grantTypes = [DEVICE_CODE_GRANT, 'refresh_token'];
    terminal = (
      await createClient(server.store, server.config, { ...base, name: 'Terminal', public: true, grantTypes })
    ).client.clientId;
    const tv = { ...base, name: 'Television', public: false, grantTypes: [DEVICE_CODE_GRANT] };
    const made = await createClient(server.store, server.config, tv);
    television = { id: made.client.clientId, secret: made.clientSecret! };
  });
  after(async () => {
    polls.abort();
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  async function window(options: { javaScriptEnabled?: boolean; locale?: string } = {}): Promise<Page> {
    const context = await browser.newContext(options);
    contexts.push(context);
    return context.newPage();
  }

  const device = (id: string, secret?: string) =>
    client.discovery(
      new URL(server.issuer),
      id,
      secret,
      secret === undefined ? client.None() : client.ClientSecretBasic(secret),
      { execute: [client.allowInsecureRequests] },
    );

  async function signIn(page: Page, user: { username: string; password: string }) {
    await page.waitForURL('**/account/login');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function noViolations(page: Page, what: string) {
    const axe = await new AxeBuilder({ page }).withTags(WCAG).analyze();
    const found = axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(found, [], `${what}: ${found.join('; ')}`);
  }

  const statusOf = async (userCode: string) =>
    (await server.store.getDeviceAuthorizationByUserCode(userCodeHash(userCode.replace('-', ''))))!.status;

  it('signs a person in through the page; the tokens once; the account page withdraws the device', async () => {
    const config = await device(terminal);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile apps' });
    assert.equal(started.verification_uri, `${server.issuer}/device`);
    const polling = client.pollDeviceAuthorizationGrant(config, started, undefined, { signal: polls.signal });
    polling.catch(() => {});

    const page = await window();
    await page.goto(started.verification_uri_complete!);
    // Not signed in: the sign-in, and back to the page with the code.
    await signIn(page, server.user);
    await page.waitForURL(`**/device?user_code=${started.user_code}`);
    await page.getByRole('heading', { name: 'Allow Terminal access?' }).waitFor();
    assert.equal(await page.locator('ul.scopes code').count(), 3);
    assert.equal(await page.locator('strong', { hasText: started.user_code }).count(), 1);
    // Following the link approved nothing: Allow does.
    assert.equal(await statusOf(started.user_code), 'pending');
    await noViolations(page, 'the confirmation');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const tokens = await polling;
    assert.equal(tokens.scope, 'openid profile apps');
    const [approved] = await server.store.listEvents({ type: 'device_authorization.approved', clientId: terminal });
    assert.equal(approved?.userId, server.user.id);
    assert.deepEqual(approved.data, { scopes: ['openid', 'profile', 'apps'] });
    assert.equal(approved.ip, '127.0.0.1');
    assert.equal(tokens.claims()!.sub, server.user.id);
    assert.equal(tokens.claims()!.name, 'Alice Liddell');
    assert.ok(tokens.refresh_token);

    // The same code again: answered already, not taken.
    await page.goto(started.verification_uri_complete!);
    await page.getByRole('alert').filter({ hasText: 'This code is not valid or has expired.' }).waitFor();

    // The account page lists the device's client among the apps; withdrawing it ends its tokens.
    await page.goto(`${server.issuer}/account`);
    const remove = page.getByRole('button', { name: 'Remove access for Terminal' });
    await remove.click();
    await page.waitForURL('**/account');
    assert.equal(await remove.count(), 0);
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (err: client.ResponseBodyError) => {
      assert.equal(err.error, 'invalid_grant');
      return true;
    });
  });

  it('works without JavaScript: the code typed in lower case without its dash; Deny is access_denied', async () => {
    const config = await device(television.id, television.secret);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = client.pollDeviceAuthorizationGrant(config, started, undefined, { signal: polls.signal });
    polling.catch(() => {});

    const user = await newUser(server);
    const page = await window({ javaScriptEnabled: false });
    await page.goto(started.verification_uri);
    await signIn(page, user);
    await page.waitForURL('**/device');
    await page.getByLabel('Code shown on your device').fill(started.user_code.replace('-', '').toLowerCase());
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Allow Television access?' }).waitFor();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Request denied' }).waitFor();
    const [denied] = await server.store.listEvents({ type: 'device_authorization.denied', userId: user.id });
    assert.equal(denied?.clientId, television.id);
    await assert.rejects(polling, (err: client.ResponseBodyError) => {
      assert.equal(err.error, 'access_denied');
      return true;
    });
  });

  it('is axe-clean in every language', async () => {
    const config = await device(terminal);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email' });
    const page = await window();
    await page.goto(`${server.issuer}/device`);
    await signIn(page, await newUser(server));
    await page.waitForURL('**/device');
    for (const locale of LOCALES) {
      await page.goto(`${server.issuer}/device?lang=${locale}`);
      assert.equal(await page.locator('html').getAttribute('lang'), locale);
      await noViolations(page, `the code form (${locale})`);
      await page.goto(`${server.issuer}/device?user_code=${started.user_code}&lang=${locale}`);
      await page.locator('form[method="post"] button[value="allow"]').waitFor();
      await noViolations(page, `the confirmation (${locale})`);
    }
  });

  it('throttles wrong codes per person and per code, and says when to try again', async (t) => {
    // The server's clock stands still: the delays after the failures do not run out meanwhile.
    server.clock.frozen = Math.floor(Date.now() / 1000);
    t.after(() => {
      delete server.clock.frozen;
    });
    const guesser = await window();
    await guesser.goto(`${server.issuer}/device`);
    await signIn(guesser, await newUser(server));
    await guesser.waitForURL('**/device');
    const guess = (page: Page, code: string) => page.request.get(`${server.issuer}/device?user_code=${code}`);
    // Five wrong codes are only wrong; the sixth attempt at once is refused unchecked.
    for (let i = 0; i < 5; i++) assert.equal((await guess(guesser, 'BBBB-BBBB')).status(), 400);
    const refused = await guess(guesser, 'CCCC-CCCC');
    assert.equal(refused.status(), 429);
    assert.ok(Number(refused.headers()['retry-after']) >= 1);
    assert.match(await refused.text(), /Too many wrong codes\. Try again in/);

    // Someone else at the same code is refused too; at another code, not.
    const other = await window();
    await other.goto(`${server.issuer}/device`);
    await signIn(other, await newUser(server));
    await other.waitForURL('**/device');
    assert.equal((await guess(other, 'bbbbbbbb')).status(), 429);
    assert.equal((await guess(other, 'DDDD-DDDD')).status(), 400);
    // A code that cannot be one (its letters, its length) is a wrong code too, never a 500.
    assert.equal((await guess(other, 'A0O1-I1')).status(), 400);
  });

  it('a client that needs two factors: Allow steps the session up (here enrolling an app), then back', async () => {
    const vault = { name: 'Vault', redirectUris: [], scopes: ['openid'], public: true, requireMfa: true };
    const made = await createClient(server.store, server.config, { ...vault, grantTypes: [DEVICE_CODE_GRANT] });
    const config = await device(made.client.clientId);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = client.pollDeviceAuthorizationGrant(config, started, undefined, { signal: polls.signal });
    polling.catch(() => {});

    const page = await window();
    await page.goto(started.verification_uri_complete!);
    await signIn(page, await newUser(server));
    await page.getByRole('button', { name: 'Allow' }).click();
    // A password is not enough: the sign-in goes on, and this user has no app yet, so enrols one.
    await page.waitForURL('**/login/totp?pending=*');
    assert.equal(await statusOf(started.user_code), 'pending');
    const totp = OTPAuth.URI.parse((await page.locator('a[href^="otpauth://totp/"]').getAttribute('href'))!);
    const code = (totp as OTPAuth.TOTP).generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });
    await page.getByLabel('Code from the app, to confirm').fill(code);
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    await page.getByRole('button', { name: 'I have saved them: continue' }).click();
    // Back to the page with the code, to answer with the stronger session.
    await page.waitForURL(`**/device?user_code=${started.user_code}`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    const tokens = await polling;
    assert.ok((tokens.claims()!.amr as string[]).includes('otp'));
  });

  it('decides only on a POST from its own page, with its form token', async () => {
    const config = await device(terminal);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const page = await window();
    await page.goto(started.verification_uri_complete!);
    await signIn(page, await newUser(server));
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const csrf = (await page.locator('input[name="csrf"]').getAttribute('value'))!;
    const form = { user_code: started.user_code, decision: 'allow' };
    const url = `${server.issuer}/device`;
    // Another site's form, with the right token: refused by its Origin.
    const foreign = await page.request.post(url, {
      form: { ...form, csrf },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(foreign.status(), 403);
    // Without the token, or with another: refused.
    assert.equal((await page.request.post(url, { form: { ...form, csrf: 'forged' } })).status(), 403);
    assert.equal(await statusOf(started.user_code), 'pending');
    const allowed = await page.request.post(url, { form: { ...form, csrf } });
    assert.equal(allowed.status(), 200);
    assert.equal(await statusOf(started.user_code), 'approved');
  });
});
