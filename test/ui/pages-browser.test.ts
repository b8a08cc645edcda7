// Every page in every language, in Chromium: axe-core finds no WCAG 2.2 A/AA violation (light, and
// dark for one language), nothing is lost at 320 px wide nor at 200 % zoom, the brand from settings is
// on every page and an operator's stylesheet cannot hide the client's name or the notice of an
// unreviewed client, the CSP is the pages' own, and sign-in works by keyboard alone and without
// JavaScript. Each page is screenshotted into test-output/pages/<language>/ for a person to look at.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { securityEvent } from '../../src/events/index.ts';
import { PAGE_CSP } from '../../src/http/plugins/html.ts';
import { ANY_SIGN_IN } from '../../src/authn/requirement.ts';
import { LOCALES } from '../../src/i18n/index.ts';
import { newId, hashToken } from '../../src/tokens/opaque.ts';
import { PendingLinkSealer } from '../../src/authn/upstream/flow.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tessera } from '../helpers/upstreams.ts';
import { newUser } from '../helpers/passkeys.ts';

/**
 * The id of the element with the focus, once it is `expected` or after 5 s: the browser moves the
 * focus to an `autofocus` field in a task of its own after the page loads, so it is waited for.
 */
async function focusedId(page: Page, expected: string): Promise<string> {
  const focused = "document.activeElement ? document.activeElement.id : ''";
  await page
    .waitForFunction(`(${focused}) === ${JSON.stringify(expected)}`, undefined, { timeout: 5000 })
    .catch(() => {});
  return String(await page.evaluate(focused));
}

const OUTPUT = new URL('../../test-output/pages/', import.meta.url);
const BRAND = { name: 'Acme Cloud', color: '#0b7a53' };
/** A 1×1 PNG. */
const LOGO = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** An operator's stylesheet: a look of its own, and every usual way of hiding what the guard keeps. */
const OPERATOR_CSS = `
body { font-family: Georgia, serif; }
main.card { border-radius: 2px; }
main.card h1, .client, .vetting { display: none !important; visibility: hidden !important; opacity: 0 !important; }
.client strong, h1 strong { font-size: 0 !important; color: transparent !important; }
.vetting { position: absolute !important; left: -9999px !important; height: 0 !important; overflow: hidden !important;
  clip-path: inset(50%) !important; transform: scale(0) !important; }
header.brand { position: fixed !important; inset: 0 !important; background: var(--bg) !important; z-index: 9999 !important; }
html { font-size: 1px !important; }
`;
const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

describe('every page in every language (Chromium, axe-core)', { skip: needsChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let dir: string;
  let dynamicClient: string;
  let links: PendingLinkSealer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-brand-'));
    await writeFile(join(dir, 'logo.png'), LOGO);
    await writeFile(join(dir, 'brand.css'), OPERATOR_CSS);
    server = await startServer({
      host: 'localhost',
      env: {
        TESSERA_BRAND_NAME: BRAND.name,
        TESSERA_BRAND_COLOR: BRAND.color,
        TESSERA_BRAND_LOGO: join(dir, 'logo.png'),
        TESSERA_BRAND_STYLESHEET: join(dir, 'brand.css'),
        TESSERA_SIGNIN_FREE_FAILURES: '1',
        TESSERA_SIGNIN_LOCK_AFTER: '2',
        TESSERA_REGISTRATION: 'open',
        TESSERA_SIGNUP: 'open',
        // Each browser context comes from an address of its own (X-Forwarded-For from loopback): the
        // throttled account's failures in one language do not slow the sign-ins of another.
        TESSERA_TRUST_PROXY: 'loopback',
      },
    });
    links = new PendingLinkSealer(server.secret);
    const made = await tessera(
      server,
      ['providers', 'create', '--type', 'github', '--id', 'gh', '--name', 'GitHub'].concat([
        '--client-id',
        'abc',
        '--client-secret-stdin',
      ]),
      'secret\n',
    );
    assert.equal(made.code, 0, made.out);
    const registered = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Helpful Agent', redirect_uris: ['http://127.0.0.1:9/cb'] }),
    });
    assert.equal(registered.status, 201, await registered.clone().text());
    dynamicClient = ((await registered.json()) as { client_id: string }).client_id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await rm(OUTPUT, { recursive: true, force: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The account page's factors of `userId`: two passkeys, a linked provider. */
  async function addFactors(userId: string, subject: string) {
    const now = Math.floor(Date.now() / 1000);
    for (const [name, synced, used] of [
      ['Work laptop', false, now - 3600],
      ['Phone', true, null],
    ] as const) {
      const passkey = {
        id: newId(),
        userId,
        credentialId: randomBytes(16).toString('base64url'),
        publicKey: new Uint8Array(randomBytes(77)),
        counter: 0,
        transports: ['internal'],
        backupEligible: synced,
        backedUp: synced,
        name,
        createdAt: now - 86_400 * 40,
        lastUsedAt: used,
        suspendedAt: null,
      };
      await server.store.addPasskey(
        passkey,
        securityEvent('passkey.added', now, { userId, data: { passkey: passkey.id } }),
      );
    }
    const link = { providerId: 'gh', subject, userId, email: 'alice@example.com', createdAt: now - 86_400 * 3 };
    await server.store.createLink({ ...link, lastUsedAt: null });
  }

  function authorizeUrl(client: string, scope: string, extra: Record<string, string> = {}): string {
    const redirect = client === dynamicClient ? 'http://127.0.0.1:9/cb' : server.clients.confidential.redirectUri;
    const params = { client_id: client, redirect_uri: redirect, response_type: 'code', scope, state: 's', ...extra };
    return `${server.issuer}/oauth2/authorize?${new URLSearchParams(params)}`;
  }

  /** Checks a page as shown: its language, the brand, the CSP, axe-core, 320 px; and saves a screenshot. */
  async function check(page: Page, locale: string, name: string, csp: string | undefined, dark = false) {
    assert.equal(csp, PAGE_CSP, `${locale} ${name}: the pages' CSP`);
    assert.equal(await page.getAttribute('html', 'lang'), locale, `${locale} ${name}`);
    assert.equal(await page.textContent('header.brand span'), BRAND.name, `${locale} ${name}`);
    assert.equal(await page.evaluate('document.querySelector("header.brand img").naturalWidth'), 1);
    assert.match(await page.title(), new RegExp(` – ${BRAND.name}$`));
    const axe = await new AxeBuilder({ page }).withTags(WCAG).analyze();
    const found = axe.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(found, [], `${locale} ${name}${dark ? ' (dark)' : ''}`);
    const folder = new URL(`${locale}/`, OUTPUT);
    await mkdir(folder, { recursive: true });
    await page.screenshot({ path: new URL(`${name}${dark ? '-dark' : ''}.png`, folder).pathname, fullPage: true });
    if (dark) return;
    // 320 CSS px (WCAG 1.4.10's reflow), and 200 % zoom of a 1280 px window (640 CSS px): no sideways scrolling.
    for (const width of [320, 640]) {
      await page.setViewportSize({ width, height: 720 });
      const fits = await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
      assert.equal(fits, true, `${locale} ${name} at ${width} px`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  /** The guarded texts are on screen, readable, and on top, whatever the operator's stylesheet says. */
  async function guarded(page: Page, selector: string, label: string) {
    const state = (await page.evaluate(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      const box = el.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + Math.min(box.width / 2, 20), box.top + box.height / 2);
      const style = getComputedStyle(el);
      return {
        visible: el.checkVisibility({ opacityProperty: true, visibilityProperty: true }),
        box: box.width > 0 && box.height > 0 && box.left >= 0,
        onTop: hit !== null && (el === hit || el.contains(hit)),
        fontSize: parseFloat(style.fontSize),
        transparent: style.color === 'rgba(0, 0, 0, 0)',
      };
    })()`)) as { visible: boolean; box: boolean; onTop: boolean; fontSize: number; transparent: boolean };
    assert.deepEqual(state, { ...state, visible: true, box: true, onTop: true, transparent: false }, label);
    assert.ok(state.fontSize >= 16, `${label}: ${state.fontSize}px`);
  }

  async function goto(page: Page, url: string) {
    const response = await page.goto(url);
    return response?.headers()['content-security-policy'];
  }

  async function submit(page: Page, selector: string) {
    const [response] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
    return response?.headers()['content-security-policy'];
  }

  async function pagesIn(context: BrowserContext, locale: string, dark: boolean) {
    const page = await context.newPage();
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
    const scopes = 'openid profile email apps webhooks';
    // The pages of mail links: a forgotten password, its answer, a dead link, sign-up.
    let csp = await goto(page, `${server.issuer}/reset/request`);
    await check(page, locale, 'forgot-password', csp, dark);
    await page.fill('#identifier', `nobody-${locale}@example.com`);
    csp = await submit(page, 'main form[action="/reset/request"] button');
    await check(page, locale, 'forgot-password-sent', csp, dark);
    csp = await goto(page, `${server.issuer}/reset?token=no-such-token`);
    await check(page, locale, 'mail-link-dead', csp, dark);
    csp = await goto(page, `${server.issuer}/signup`);
    await check(page, locale, 'sign-up', csp, dark);
    // The sign-in page, then its error, then the throttled answer of an account that failed too often.
    csp = await goto(page, authorizeUrl(server.clients.confidential.id, scopes));
    await check(page, locale, 'sign-in', csp, dark);
    await guarded(page, 'main .client', `${locale} sign-in: the client's name`);
    const signIn = page.url();
    csp = await goto(page, `${signIn}&error=login_failed`);
    assert.equal(await focusedId(page, 'username'), 'username', 'the focus on the first field in error');
    assert.equal(await page.getAttribute('#username', 'aria-invalid'), 'true');
    await check(page, locale, 'sign-in-failed', csp, dark);
    for (let attempt = 0; attempt < 4; attempt++) {
      await page.fill('#username', 'locked-out');
      await page.fill('#password', 'not the password');
      csp = await submit(page, 'main form[action="/login"] button[type=submit]');
      if (page.url() === `${server.issuer}/login`) break;
    }
    assert.equal(page.url(), `${server.issuer}/login`, 'the throttled answer');
    await check(page, locale, 'sign-in-throttled', csp, dark);
    // Sign in (a user of this language's own); the consent page with many scopes.
    const user = await newUser(server);
    await goto(page, signIn);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    csp = await submit(page, 'main form[action="/login"] button[type=submit]');
    assert.match(page.url(), /\/consent\?/);
    await check(page, locale, 'consent', csp, dark);
    await guarded(page, 'main h1', `${locale} consent: the client's name`);
    await submit(page, 'button[value=allow]');
    // The client takes its code: a grant, which the account page lists.
    const code = new URL(page.url()).searchParams.get('code')!;
    const c = server.clients.confidential;
    const token = await fetch(`${server.issuer}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: c.redirectUri }),
    });
    assert.equal(token.status, 200, await token.clone().text());
    // A client that registered itself: the consent page says nobody reviewed it.
    csp = await goto(page, authorizeUrl(dynamicClient, 'openid profile'));
    await check(page, locale, 'consent-unreviewed', csp, dark);
    await guarded(page, 'main .vetting', `${locale} consent: the notice`);
    // An authenticator app added on the account page: a wrong code first, then the recovery codes.
    await goto(page, `${server.issuer}/account`);
    const uri = await page.getAttribute('a[href^="otpauth://totp/"]', 'href');
    const app = OTPAuth.URI.parse(uri!) as OTPAuth.TOTP;
    const appCode = () => app.generate({ timestamp: (Date.now() / 1000 + server.clock.offset) * 1000 });
    await page.fill('#enrol-code', String((Number(appCode()) + 500_000) % 1_000_000).padStart(6, '0'));
    csp = await submit(page, 'form[action="/account/totp"] button');
    assert.equal(await focusedId(page, 'enrol-code'), 'enrol-code');
    await check(page, locale, 'authenticator-add-failed', csp, dark);
    await page.fill('#enrol-code', appCode());
    csp = await submit(page, 'form[action="/account/totp"] button');
    assert.equal(await page.locator('ul.codes code').count(), 10);
    await check(page, locale, 'recovery-codes', csp, dark);
    // The account page: applications, the app, passkeys, a linked provider; then its password form's error.
    await addFactors(user.id, `s-${locale}-${dark}`);
    csp = await goto(page, `${server.issuer}/account`);
    await check(page, locale, 'account', csp, dark);
    await page.fill('#current', 'wrong');
    await page.fill('#new', 'a new and long password');
    csp = await submit(page, 'form[action="/account/password"] button');
    assert.equal(await focusedId(page, 'current'), 'current');
    await check(page, locale, 'account-password-error', csp, dark);
    // An error page, a failed sign-in through a provider, the link page.
    csp = await goto(page, authorizeUrl('no-such-client', 'openid'));
    await check(page, locale, 'error', csp, dark);
    csp = await goto(page, `${server.issuer}/login/upstream/gh/callback?code=x&state=y`);
    await check(page, locale, 'upstream-failed', csp, dark);
    const cookie = (await context.cookies()).find((c) => c.name === 'tessera_browser')!;
    const link = links.seal({
      provider: 'gh',
      subject: `s-${locale}`,
      email: 'alice@example.com',
      emailVerified: true,
      reason: 'email_exists',
      factor: 'upstream',
      resume: null,
      clientId: null,
      need: ANY_SIGN_IN,
      browser: hashToken(cookie.value).slice(0, 32),
      exp: Math.floor(Date.now() / 1000) + 600,
    } as never);
    csp = await goto(page, `${server.issuer}/login/link?link=${encodeURIComponent(link)}`);
    await check(page, locale, 'link', csp, dark);
    // Signing in again: a password, then the passkey the user now has.
    await goto(page, `${server.issuer}/account/login?reauth=1`);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    csp = await submit(page, 'main form[action="/account/login"] button[type=submit]');
    assert.match(page.url(), /\/login\/passkey\?pending=/);
    await check(page, locale, 'passkey-step', csp, dark);
    // The other second factors of that sign-in: the app's code (and a wrong one), a recovery code.
    const step = page.url();
    csp = await goto(page, step.replace('/login/passkey?', '/login/totp?'));
    await check(page, locale, 'authenticator-step', csp, dark);
    await page.fill('#code', '000000');
    csp = await submit(page, 'main form[action="/login/totp"] button');
    assert.equal(await page.locator('main [role=alert]').count(), 1, `${locale}: the wrong code said`);
    await check(page, locale, 'authenticator-step-failed', csp, dark);
    csp = await goto(page, step.replace('/login/passkey?', '/login/recovery-code?'));
    await check(page, locale, 'recovery-code-step', csp, dark);
    // Sign-out: the confirmation, then the signed-out page.
    csp = await goto(page, `${server.issuer}/oauth2/logout?client_id=${server.clients.confidential.id}`);
    await check(page, locale, 'sign-out', csp, dark);
    await guarded(page, 'main .client', `${locale} sign-out: the client's name`);
    csp = await submit(page, 'main form[action="/logout"] button');
    await check(page, locale, 'signed-out', csp, dark);
    await page.close();
  }

  it('light: every page in every language; dark: every page in English', async () => {
    const runs = [...LOCALES.map((locale) => [locale, false] as const), ['en', true] as const];
    // Three languages at a time, each in a browser context of its own (its Accept-Language, its cookies).
    const next = async (): Promise<void> => {
      const run = runs.shift();
      if (!run) return;
      const [locale, dark] = run;
      const address = `203.0.113.${runs.length + 10}`;
      const context = await browser.newContext({
        locale,
        viewport: { width: 1280, height: 800 },
        extraHTTPHeaders: { 'x-forwarded-for': address },
      });
      try {
        await pagesIn(context, locale, dark);
      } finally {
        await context.close();
      }
      return next();
    };
    await Promise.all([next(), next(), next()]);
  });

  it('ui_locales=de chooses German; by keyboard alone: sign in and allow', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    try {
      const page = await context.newPage();
      const user = await newUser(server);
      await page.goto(authorizeUrl(server.clients.confidential.id, 'openid profile', { ui_locales: 'de' }));
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.equal(await page.textContent('h1'), 'Anmelden');
      // The username field has the focus; Tab to the password, Enter submits.
      assert.equal(await focusedId(page, 'username'), 'username');
      await page.keyboard.type(user.username);
      await page.keyboard.press('Tab');
      await page.keyboard.type(user.password);
      await Promise.all([page.waitForURL(/\/consent\?/), page.keyboard.press('Enter')]);
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      // Tab to "Erlauben", the first button, and press it.
      let focused = '';
      for (let i = 0; i < 20 && focused !== 'Erlauben'; i++) {
        await page.keyboard.press('Tab');
        focused = (await page.evaluate('document.activeElement.textContent')) as string;
      }
      assert.equal(focused, 'Erlauben');
      await Promise.all([page.waitForURL(/\/cb\/confidential\?code=/), page.keyboard.press('Enter')]);
    } finally {
      await context.close();
    }
  });

  it('Accept-Language: ja chooses Japanese, ui_locales=fr French; without JavaScript the sign-in works', async () => {
    const context = await browser.newContext({ locale: 'ja', javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      const user = await newUser(server);
      await page.goto(authorizeUrl(server.clients.confidential.id, 'openid'));
      assert.equal(await page.getAttribute('html', 'lang'), 'ja');
      assert.equal(await page.textContent('h1'), 'ログイン');
      await page.fill('#username', user.username);
      await page.fill('#password', user.password);
      await Promise.all([page.waitForURL(/\/consent\?/), page.click('main form[action="/login"] button')]);
      await Promise.all([page.waitForURL(/\/cb\/confidential\?code=/), page.click('button[value=allow]')]);
      await page.goto(authorizeUrl(server.clients.confidential.id, 'openid', { ui_locales: 'fr', prompt: 'login' }));
      assert.equal(await page.getAttribute('html', 'lang'), 'fr');
      assert.equal(await page.textContent('h1'), 'Se connecter');
    } finally {
      await context.close();
    }
  });
});
