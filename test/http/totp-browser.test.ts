// Authenticator apps in a real browser (headless Chromium): enrolled on the account page from its
// otpauth:// link's secret, asked after the password, the ID token read by openid-client saying
// `otp` and `mfa` at the mfa level; the same code refused twice; acr_values asking for two factors
// stepping a password-only session up; a recovery code working once; the whole of it with JavaScript
// off; TESSERA_MFA=required walking a new user through enrolment before reaching the client. Codes
// are computed by otpauth, independently of the server. One browser for the file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const [SFA, MFA] = ACR_VALUES;

describe('authenticator apps in Chromium', { skip: needsChromium }, () => {
  let server: TestServer;
  let required: TestServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    server = await startServer();
    required = await startServer({ env: { TESSERA_MFA: 'required' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
    await required?.close();
  });

  async function window(options: { javaScriptEnabled?: boolean } = {}) {
    const context = await browser.newContext(options);
    contexts.push(context);
    return context.newPage();
  }

  /** The app's code at `on`'s clock; tests move it on by whole steps so that each code is new. */
  const codeOf = (on: TestServer, totp: OTPAuth.TOTP) =>
    totp.generate({ timestamp: (Date.now() / 1000 + on.clock.offset) * 1000 });
  const nextStep = (on: TestServer) => {
    on.clock.offset += 30;
  };

  async function passwordSignIn(on: TestServer, page: Page, user: { username: string; password: string }) {
    await page.goto(`${on.issuer}/account/login`);
    await fillPassword(page, user);
  }

  async function fillPassword(page: Page, user: { username: string; password: string }) {
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** The secret of the page's otpauth:// link, as the phone's app would take it, then the code to confirm. */
  async function enrolFromPage(on: TestServer, page: Page): Promise<{ totp: OTPAuth.TOTP; codes: string[] }> {
    const href = await page.locator('a[href^="otpauth://totp/"]').getAttribute('href');
    const totp = OTPAuth.URI.parse(href!) as OTPAuth.TOTP;
    assert.equal(await page.getByRole('img', { name: 'QR code to scan with your authenticator app' }).count(), 1);
    const field = page.getByLabel('Code from the app, to confirm');
    assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
    await field.fill(codeOf(on, totp));
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    const codes = await page.locator('ul.codes code').allTextContents();
    assert.equal(codes.length, 10);
    nextStep(on);
    return { totp, codes };
  }

  /** A new user who signed in with the password and turned on an app on the account page. */
  async function enrolled(options: { javaScriptEnabled?: boolean } = {}) {
    const user = await newUser(server);
    const page = await window(options);
    await passwordSignIn(server, page, user);
    await page.waitForURL('**/account');
    const app = await enrolFromPage(server, page);
    await page.getByRole('link', { name: 'I have saved them: back to your account' }).click();
    await page.getByText(/Turned on .*; not used to sign in yet\./).waitFor();
    return { user, page, ...app };
  }

  async function typeCode(page: Page, code: string) {
    const field = page.getByLabel('Authenticator code');
    assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
    await field.fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
  }

  /** An authorization request of the first-party client, up to its redirect URI: the ID token's claims. */
  async function authorize(on: TestServer, page: Page, signIn: (page: Page) => Promise<void>, acr?: string) {
    const c = on.clients.firstParty;
    const config = await client.discovery(new URL(on.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const params = { redirect_uri: c.redirectUri, scope: 'openid', state, nonce, ...(acr ? { acr_values: acr } : {}) };
    await page.goto(client.buildAuthorizationUrl(config, params).href);
    await signIn(page);
    await page.waitForURL(`${c.redirectUri}?**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), {
      expectedState: state,
      expectedNonce: nonce,
    });
    return tokens.claims()!;
  }

  it('password and app code: amr pwd, otp and mfa at the mfa level; the same code is refused twice', async () => {
    const { user, totp, page } = await enrolled();
    await page.context().clearCookies();
    const code = codeOf(server, totp);
    const claims = await authorize(server, page, async (p) => {
      await fillPassword(p, user);
      await p.waitForURL('**/login/totp?pending=*');
      await typeCode(p, code);
    });
    assert.equal(claims.sub, user.id);
    assert.deepEqual([...(claims.amr as string[])].sort(), ['mfa', 'otp', 'pwd']);
    assert.equal(claims.acr, MFA);

    const other = await window();
    await passwordSignIn(server, other, user);
    await other.waitForURL('**/login/totp?pending=*');
    await typeCode(other, code);
    await other.getByRole('alert').getByText('That code is not right, or it has been used already.').waitFor();
    assert.match(other.url(), /\/login\/totp/);
    nextStep(server);
    await typeCode(other, codeOf(server, totp));
    await other.waitForURL('**/account');
    nextStep(server);
  });

  it('acr_values asking for two factors steps a password-only session up to the app', async () => {
    // Signed in with the password alone, then the app turned on: the session is still one factor.
    const { user, totp, page } = await enrolled();
    const plain = await authorize(server, page, async () => {});
    assert.deepEqual([plain.amr, plain.acr], [['pwd'], SFA]);
    const claims = await authorize(
      server,
      page,
      async (p) => {
        await p.waitForURL('**/login/totp?pending=*');
        await typeCode(p, codeOf(server, totp));
      },
      MFA,
    );
    assert.equal(claims.sub, user.id);
    assert.equal(claims.acr, MFA);
    assert.deepEqual([...(claims.amr as string[])].sort(), ['mfa', 'otp', 'pwd']);
    nextStep(server);
  });

  it('a recovery code signs in once instead of the app, and the account page says so', async () => {
    const { user, codes, page } = await enrolled();
    const useCode = async (p: Page, code: string) => {
      await passwordSignIn(server, p, user);
      await p.waitForURL('**/login/totp?pending=*');
      await p.getByRole('link', { name: 'Use a recovery code instead' }).click();
      await p.getByLabel('Recovery code').fill(code);
      await p.getByRole('button', { name: 'Verify' }).click();
    };
    await page.context().clearCookies();
    await useCode(page, codes[0]!);
    await page.waitForURL('**/account');
    await page.getByText('9 of 10 recovery codes left; 1 used.').waitFor();
    await page.getByText(/A recovery code was last used to sign in/).waitFor();
    const other = await window();
    await useCode(other, codes[0]!);
    await other.getByRole('alert').getByText('That recovery code is not right, or it has been used already.').waitFor();
  });

  it('works without JavaScript: enrolment and a sign-in with password and code', async () => {
    const { user, totp } = await enrolled({ javaScriptEnabled: false });
    const page = await window({ javaScriptEnabled: false });
    const claims = await authorize(server, page, async (p) => {
      await fillPassword(p, user);
      await p.waitForURL('**/login/totp?pending=*');
      await typeCode(p, codeOf(server, totp));
    });
    assert.equal(claims.acr, MFA);
    assert.ok((claims.amr as string[]).includes('otp'));
    nextStep(server);
  });

  it('TESSERA_MFA=required: a new user enrols an app before reaching the client', async () => {
    const user = await newUser(required);
    const page = await window();
    const c = required.clients.firstParty;
    const claims = await authorize(required, page, async (p) => {
      await fillPassword(p, user);
      await p.waitForURL('**/login/totp?pending=*');
      await p.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
      assert.ok(!p.url().startsWith(c.redirectUri));
      await enrolFromPage(required, p);
      await p.getByRole('button', { name: 'I have saved them: continue' }).click();
    });
    assert.equal(claims.sub, user.id);
    assert.equal(claims.acr, MFA);
    assert.deepEqual([...(claims.amr as string[])].sort(), ['mfa', 'otp', 'pwd']);
    assert.equal(await required.store.hasTotp(user.id), true);
  });
});
