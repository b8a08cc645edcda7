// Mail's flows in Chromium, each followed from the mail a real SMTP server received (parsed by
// mailparser): a forgotten password reset from "Forgot your password?" and the old sessions ended; a
// user with a passkey gives it between the link and the new password, and has a session only once
// the password is chosen; sign-up (TESSERA_SIGNUP=open)
// that cannot sign in before the address is verified and then signs in to a client; an invitation
// from the CLI that ends with a working sign-in; a change of address on the account page that takes
// effect only from the link, turns email_verified true, and tells the old address. One browser.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { run } from '../../src/cli/main.ts';
import { MailDelivery } from '../../src/mail/delivery.ts';
import { smtpTransport } from '../../src/mail/transport.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser } from '../helpers/passkeys.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { startSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';

const CHOSEN = 'violet kettle under moonlight';

describe('mail flows in Chromium, from the received mail', { skip: needsChromium }, () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let delivery: MailDelivery;
  let browser: Browser;
  let config: client.Configuration;
  const contexts: BrowserContext[] = [];
  const silent = { info() {}, warn() {}, error() {} };

  before(async () => {
    smtp = await startSmtp();
    server = await startServer({
      host: 'localhost',
      env: { TESSERA_SMTP_URL: smtp.url, TESSERA_SMTP_PASSWORD: smtp.password, TESSERA_SIGNUP: 'open' },
    });
    const transport = smtpTransport({ url: smtp.url, password: smtp.password, ca: smtp.ca });
    const from = server.config.mail.from;
    delivery = new MailDelivery(server.store, { secret: server.secret, transport, from, interval: 0.05, log: silent });
    delivery.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const c = server.clients.firstParty;
    config = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await delivery?.stop();
    await server?.close();
    await smtp?.close();
  });

  async function window(): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    return context.newPage();
  }

  const mailTo = (to: string, subject: RegExp, from = 0): Promise<ReceivedMail> =>
    smtp.waitFor((m) => m.to.includes(to) && subject.test(m.subject) && smtp.received.indexOf(m) >= from);

  async function signIn(page: Page, username: string, password: string) {
    await page.goto(`${server.issuer}/account/login`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function choose(page: Page, password: string) {
    await page.getByLabel('New password', { exact: true }).fill(password);
    await page.getByLabel('New password again').fill(password);
    await page.getByRole('button', { name: 'Save the password' }).click();
  }

  /** An authorization request of the first-party client, signed in with a password: the ID token's claims. */
  async function authorize(page: Page, username: string, password: string) {
    const [state, nonce] = [client.randomState(), client.randomNonce()];
    const redirectUri = server.clients.firstParty.redirectUri;
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      state,
      nonce,
    });
    await page.goto(url.href);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${redirectUri}?**`);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url()), {
      expectedState: state,
      expectedNonce: nonce,
    });
    return tokens.claims()!;
  }

  it('resets a forgotten password from "Forgot your password?" and the mail, ending the old sessions', async () => {
    const user = await newUser(server);
    const old = await window();
    await signIn(old, user.username, user.password);
    await old.waitForURL('**/account');
    const page = await window();
    await page.goto(`${server.issuer}/account/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    const from = smtp.received.length;
    await page.getByLabel('Username or email address').fill(`${user.username}@example.com`);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    const mail = await mailTo(`${user.username}@example.com`, /Reset your password/, from);
    await page.goto(mail.link!);
    await choose(page, CHOSEN);
    // This browser is signed in by the link; the session from before the reset has ended.
    await page.getByText('Your password has changed; your other sessions have ended.').waitFor();
    await old.goto(`${server.issuer}/account`);
    assert.match(old.url(), /\/account\/login$/);
    await page.context().clearCookies();
    const claims = await authorize(page, user.username, CHOSEN);
    assert.equal(claims.sub, user.id);
    // The link again: refused.
    await page.goto(mail.link!);
    await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
  });

  it('asks a user with a passkey for it between the link and the new password', async () => {
    const user = await newUser(server);
    const page = await window();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await signIn(page, user.username, user.password);
    await page.waitForURL('**/account');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL('**/account?passkey=added#passkeys');
    await page.context().clearCookies();
    const from = smtp.received.length;
    await page.goto(`${server.issuer}/reset/request`);
    await page.getByLabel('Username or email address').fill(user.username);
    await page.getByRole('button', { name: 'Send the link' }).click();
    const mail = await mailTo(`${user.username}@example.com`, /Reset your password/, from);
    await page.goto(mail.link!);
    // The sign-in policy's second step: the passkey, then back to the reset.
    await page.getByRole('heading', { name: 'Use your passkey' }).waitFor();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL('**/reset/password?reset=**');
    // No session before the new password (only the one from before): the sign-in waits, sealed, for this page.
    const sessions = async () =>
      (await server.store.listSessionsOf(user.id, Math.floor(Date.now() / 1000))).map((s) => s.id);
    const before = await sessions();
    assert.equal(before.length, 1);
    await choose(page, CHOSEN);
    await page.getByText('Your password has changed; your other sessions have ended.').waitFor();
    const after = await sessions();
    assert.equal(after.length, 1);
    assert.notEqual(after[0], before[0]);
    // The new password is taken (in a window without the authenticator, whose autofill would sign in
    // alone), and the passkey is asked for after it, as at every sign-in of this user.
    const other = await window();
    await signIn(other, user.username, CHOSEN);
    await other.waitForURL('**/login/passkey?pending=**');
  });

  it('signs up, cannot sign in before the address is verified, then signs in to a client', async () => {
    const page = await window();
    await page.goto(`${server.issuer}/account/login`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    const from = smtp.received.length;
    await page.getByLabel('Username').fill('newcomer');
    await page.getByLabel('Email address').fill('newcomer@example.org');
    await page.getByLabel('Password').fill(CHOSEN);
    await page.getByRole('button', { name: 'Create the account' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await signIn(page, 'newcomer', CHOSEN);
    await page.getByText('Incorrect username or password.').waitFor();
    const mail = await mailTo('newcomer@example.org', /Finish creating your account/, from);
    await page.goto(mail.link!);
    await page.getByRole('heading', { name: 'Your account is ready' }).waitFor();
    const claims = await authorize(page, 'newcomer', CHOSEN);
    assert.equal(claims.email, 'newcomer@example.org');
    assert.equal(claims.email_verified, true);
  });

  it('an invitation from the CLI ends with a working sign-in', async () => {
    const from = smtp.received.length;
    const invited = cliIo(server);
    // The CLI reads the server's settings: its issuer is what the link points at.
    invited.io.env = { ...invited.io.env, TESSERA_ISSUER: server.issuer };
    assert.equal(await run(['users', 'invite', '--email', 'guest@example.net', '--username', 'guest'], invited.io), 0);
    const shown = cliIo(server);
    await run(['users', 'show', 'guest'], shown.io);
    assert.match(shown.lines.join('\n'), /invitation\s+pending until/);
    const mail = await mailTo('guest@example.net', /You are invited/, from);
    const page = await window();
    await page.goto(mail.link!);
    await page.getByText('Your username is guest.').waitFor();
    await choose(page, CHOSEN);
    await page.getByRole('heading', { name: 'Your account is ready' }).waitFor();
    const claims = await authorize(page, 'guest', CHOSEN);
    assert.equal(claims.email_verified, true);
    const after = cliIo(server);
    await run(['users', 'show', 'guest'], after.io);
    assert.match(after.lines.join('\n'), /invitation\s+none/);
  });

  it('a new address takes effect only from its link, is then verified, and the old address is told', async () => {
    const user = await newUser(server);
    const page = await window();
    await signIn(page, user.username, user.password);
    await page.waitForURL('**/account');
    const from = smtp.received.length;
    await page.getByLabel('New email address').fill('moved@example.com');
    await page.getByRole('button', { name: 'Change the address' }).click();
    await page.getByText('A mail with a link to confirm the new address is on its way.').waitFor();
    assert.equal((await server.store.getUserById(user.id))?.email, `${user.username}@example.com`);
    const mail = await mailTo('moved@example.com', /Confirm your email address/, from);
    await page.goto(mail.link!);
    await page.getByRole('heading', { name: 'Your email address is confirmed' }).waitFor();
    const changed = (await server.store.getUserById(user.id))!;
    assert.equal(changed.email, 'moved@example.com');
    assert.equal(changed.emailVerified, true);
    const notice = await mailTo(`${user.username}@example.com`, /was changed/, from);
    assert.doesNotMatch(notice.text, /moved@example\.com/);
    // A change needs a recent sign-in: six minutes on, the account page asks for one first.
    server.clock.offset += 6 * 60;
    try {
      await page.goto(`${server.issuer}/account`);
      await page.getByLabel('New email address').fill('again@example.com');
      await page.getByRole('button', { name: 'Change the address' }).click();
      await page.waitForURL('**/account/login?reauth=1');
    } finally {
      server.clock.offset -= 6 * 60;
    }
  });
});
