// Passkeys in a real browser: headless Chromium with its virtual authenticator (CDP WebAuthn domain:
// CTAP2, internal transport, resident keys, user verification) adds a passkey on the account page,
// signs in without a password from the username field's autofill and from the "Sign in with a
// passkey" button, signs in with a password and then the passkey, steps a password-only session up
// when acr_values asks for the phishing-resistant level, renames and removes a passkey (ending the
// other sessions); the ID tokens are read by openid-client. One browser for the file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const [, MFA, PHR] = ACR_VALUES;

/** A browser whose WebAuthn has no autofill (conditional mediation), as some still are. */
const WITHOUT_AUTOFILL = 'PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);';

describe('passkeys in Chromium with a virtual authenticator', { skip: needsChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let config: client.Configuration;
  const contexts: BrowserContext[] = [];

  before(async () => {
    server = await startServer({ host: 'localhost' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const c = server.clients.firstParty;
    config = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  /** A browser window with a platform authenticator (a phone's or laptop's passkeys). */
  async function device(
    options: { autofill?: boolean; synced?: boolean; viewport?: { width: number; height: number } } = {},
  ) {
    const context = await browser.newContext(options.viewport ? { viewport: options.viewport } : {});
    contexts.push(context);
    if (options.autofill === false) await context.addInitScript(WITHOUT_AUTOFILL);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
        ...(options.synced ? { defaultBackupEligibility: true, defaultBackupState: true } : {}),
      },
    });
    const credentials = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
    return { context, page, credentials };
  }

  async function passwordSignIn(page: Page, user: { username: string; password: string }) {
    await page.goto(`${server.issuer}/account/login`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function addPasskey(page: Page, name?: string) {
    await page.goto(`${server.issuer}/account`);
    if (name) await page.getByLabel('Name of the new passkey (optional)').fill(name);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL('**/account?passkey=added#passkeys');
  }

  /** A user who signed in with their password and added a passkey on the account page, then signed out. */
  async function enrolled(options: Parameters<typeof device>[0] = {}) {
    const user = await newUser(server);
    const window = await device(options);
    await passwordSignIn(window.page, user);
    await window.page.waitForURL('**/account');
    await addPasskey(window.page, 'Laptop');
    await window.context.clearCookies();
    return { user, ...window };
  }

  /** An authorization request of the first-party client in `page`, up to its redirect URI: the callback. */
  async function authorize(page: Page, signIn: (page: Page) => Promise<void>, params: Record<string, string> = {}) {
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const redirectUri = server.clients.firstParty.redirectUri;
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      state,
      nonce,
      ...params,
    });
    await page.goto(url.href);
    await signIn(page);
    await page.waitForURL(`${redirectUri}?**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), {
      expectedState: state,
      expectedNonce: nonce,
    });
    return tokens.claims()!;
  }

  it('adds a passkey on the account page and signs in with it from the username autofill, no password', async () => {
    const { user, page, credentials } = await enrolled();
    const [credential] = await credentials();
    assert.equal(credential?.isResidentCredential, true, 'discoverable');
    assert.equal(credential?.rpId, 'localhost');
    // Nothing typed, nothing clicked: the browser offers the passkey on the username field
    // (autocomplete="username webauthn"), and Chromium's virtual authenticator takes the offer.
    const claims = await authorize(page, async () => {});
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.acr, PHR);
    const [passkey] = await server.store.listPasskeys(user.id);
    assert.equal(passkey?.name, 'Laptop');
    assert.ok(passkey!.lastUsedAt! > 0 && passkey!.counter > 0, 'the use and the counter recorded');
  });

  it('without autofill, the "Sign in with a passkey" button signs in; a synced passkey says swk', async () => {
    const { user, page } = await enrolled({ autofill: false, synced: true });
    const claims = await authorize(page, async (p) => {
      await p.getByRole('button', { name: 'Sign in with a passkey' }).click();
    });
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['swk', 'user', 'mfa']);
    assert.equal(claims.acr, PHR);
  });

  it('a password, then the passkey as the second factor: pwd, hwk, user and mfa', async () => {
    const { user, page } = await enrolled({ autofill: false });
    const claims = await authorize(
      page,
      async (p) => {
        await p.getByLabel('Username').fill(user.username);
        await p.getByLabel('Password').fill(user.password);
        await p.getByRole('button', { name: 'Sign in', exact: true }).click();
        await p.getByRole('heading', { name: 'Use your passkey' }).waitFor();
        await p.getByRole('button', { name: 'Use a passkey' }).click();
      },
      { acr_values: MFA! },
    );
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['pwd', 'hwk', 'user', 'mfa']);
    assert.equal(claims.acr, MFA);
  });

  it('acr_values asking the phishing-resistant level steps a password-only session up to the passkey', async () => {
    const user = await newUser(server);
    const { page } = await device();
    // Signed in with the password before the passkey existed: the session has one factor.
    await passwordSignIn(page, user);
    await page.waitForURL('**/account');
    await addPasskey(page);
    const plain = await authorize(page, async () => {});
    assert.deepEqual(plain.amr, ['pwd']);
    const stepped = await authorize(
      page,
      async (p) => {
        await p.getByRole('button', { name: 'Use a passkey' }).click();
      },
      { acr_values: PHR! },
    );
    assert.deepEqual(stepped.amr, ['pwd', 'hwk', 'user', 'mfa']);
    assert.equal(stepped.acr, PHR);
    assert.ok(stepped.auth_time! >= plain.auth_time!);
  });

  it('renames and removes a passkey; removing it ends the other sessions', async () => {
    const user = await newUser(server);
    const elsewhere = await device();
    await passwordSignIn(elsewhere.page, user);
    await elsewhere.page.waitForURL('**/account');
    const { page } = await device();
    await passwordSignIn(page, user);
    await page.waitForURL('**/account');
    await addPasskey(page, 'Laptop');
    assert.match((await page.locator('#passkeys ~ section.passkey').textContent()) ?? '', /Laptop[\s\S]*not used yet/);
    await page.getByLabel('New name for Laptop').fill('Work laptop');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL('**/account?passkey=renamed#passkeys');
    await page.getByRole('button', { name: 'Remove Work laptop' }).click();
    await page.waitForURL('**/account?passkey=removed#passkeys');
    assert.match((await page.getByRole('status').textContent()) ?? '', /other sessions have ended/);
    assert.equal(await page.getByText('You have no passkeys yet.').isVisible(), true);
    await elsewhere.page.goto(`${server.issuer}/account`);
    assert.equal(new URL(elsewhere.page.url()).pathname, '/account/login', 'the other browser is signed out');
    await page.goto(`${server.issuer}/account`);
    assert.equal(new URL(page.url()).pathname, '/account', 'this one is not');
  });

  it('the pages fit a phone and label every field', async () => {
    const user = await newUser(server);
    const { page } = await device({ viewport: { width: 360, height: 740 } });
    const fits = async () =>
      page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
    await page.goto(`${server.issuer}/account/login`);
    assert.equal(await page.getByLabel('Username').getAttribute('autocomplete'), 'username webauthn');
    assert.equal(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(), true);
    assert.equal(await fits(), true, 'sign-in page');
    await passwordSignIn(page, user);
    await page.waitForURL('**/account');
    await addPasskey(page, 'A passkey with a rather long name for a small screen');
    assert.equal(await fits(), true, 'account page');
    for (const label of [
      'Name of the new passkey (optional)',
      'New name for A passkey with a rather long name for a small screen',
    ]) {
      assert.equal(await page.getByLabel(label).isVisible(), true, label);
    }
    await page.context().clearCookies();
    await page.addInitScript(WITHOUT_AUTOFILL);
    await passwordSignIn(page, user);
    await page.getByRole('heading', { name: 'Use your passkey' }).waitFor();
    assert.equal(await fits(), true, 'passkey step page');
    assert.equal(await page.getByRole('button', { name: 'Use a passkey' }).isVisible(), true);
  });

  it('without JavaScript the passkey button is not there, and the password signs in as before', async () => {
    const user = await newUser(server);
    const context = await browser.newContext({ javaScriptEnabled: false });
    contexts.push(context);
    const page = await context.newPage();
    await passwordSignIn(page, user);
    await page.waitForURL('**/account');
    await page.goto(`${server.issuer}/account/login`);
    assert.equal(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible(), false);
    await page.goto(`${server.issuer}/account`);
    assert.equal(await page.getByRole('button', { name: 'Add a passkey' }).isVisible(), false);
    assert.equal(
      await page.getByText('Adding a passkey needs a browser with JavaScript and passkey support.').isVisible(),
      true,
    );
  });
});
