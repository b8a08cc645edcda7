// The admin console in Chromium with JavaScript off, through a day of support work: an admin signs in
// at the console (enrolling an authenticator app on the way, as TESSERA_ADMIN_MFA=required asks),
// finds a locked user through the search and unlocks them, signs a user out everywhere (their refresh
// token stops working), rotates a client's secret (the old one refused, the new one shown once and
// accepted), and reads each action in the event log with its actor; deleting a client asks for a
// recent sign-in. axe-core finds no WCAG A/AA violation on any page. Also: a signed-in user without
// the admin role gets 403, an admin session short of the second factor steps up (unless
// TESSERA_ADMIN_MFA=off), and a form posted without the token, with a wrong one, or from another
// origin is refused and changes nothing. One browser for the file, one database per server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { changeUserRoles } from '../../src/admin/roles.ts';
import { ADMIN_ROLE } from '../../src/store/users.ts';
import { enableUser } from '../../src/admin/support.ts';
import { CLI } from '../../src/events/index.ts';
import { createWebhook } from '../../src/webhooks/subscriptions.ts';
import { axeClean } from '../helpers/axe.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

type Person = { id: string; username: string; password: string };

describe('the admin console in Chromium without JavaScript', { skip: needsChromium }, () => {
  let server: TestServer;
  let open: TestServer;
  let browser: Browser;
  let admin: Person;
  let totp: OTPAuth.TOTP;
  let page: Page;
  /** A context with JavaScript, for axe-core. */
  let checking: BrowserContext;
  const contexts: BrowserContext[] = [];

  const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
  const codeOf = (t: OTPAuth.TOTP) => t.generate({ timestamp: now() * 1000 });
  /** On to the next 30-second step, so that the next code is a new one. */
  const nextStep = () => {
    server.clock.offset += 30;
  };
  const makeAdmin = async (on: TestServer) => {
    const person = await newUser(on);
    await changeUserRoles(on.store, person.username, { add: [ADMIN_ROLE] }, { now: now() });
    return person;
  };

  async function window(): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false });
    contexts.push(context);
    const opened = await context.newPage();
    opened.setDefaultTimeout(15_000);
    return opened;
  }

  async function fillPassword(p: Page, person: Person) {
    await p.getByLabel('Username').fill(person.username);
    await p.getByLabel('Password').fill(person.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** A user whose account is locked: two failures counted (the lock after two), as wrong passwords would. */
  async function lockedUser(): Promise<Person> {
    const person = await newUser(server);
    const subject = person.username.toLowerCase();
    for (const at of [now() - 2, now() - 1])
      await server.store.recordFailures({ keys: [{ key: `account:${subject}`, subject }], now: at, window: 3600 });
    const refused = await passwordSignIn(new BrowserSim(server.issuer), person);
    assert.equal(refused.status, 429, 'locked: even the right password is refused');
    return person;
  }

  before(async () => {
    const env = { TESSERA_SIGNIN_FREE_FAILURES: '1', TESSERA_SIGNIN_LOCK_AFTER: '2' };
    server = await startServer({ env });
    open = await startServer({ env: { TESSERA_ADMIN_MFA: 'off' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    checking = await browser.newContext();
    contexts.push(checking);
    admin = await makeAdmin(server);
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await server?.close();
    await open?.close();
  });

  it('an admin signs in at the console, enrolling an authenticator app on the way', async () => {
    page = await window();
    await page.goto(`${server.issuer}/admin`);
    await page.waitForURL('**/admin/login');
    await page.getByText('Sign in to continue to the admin console.').waitFor();
    await axeClean(checking, page);
    await fillPassword(page, admin);
    await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
    const href = await page.locator('a[href^="otpauth://totp/"]').getAttribute('href');
    totp = OTPAuth.URI.parse(href!) as OTPAuth.TOTP;
    await page.getByLabel('Code from the app, to confirm').fill(codeOf(totp));
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    nextStep();
    await page.getByRole('button', { name: 'I have saved them: continue' }).click();
    await page.waitForURL('**/admin/users');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await axeClean(checking, page);
  });

  it('finds a locked user through the search and unlocks them; they sign in again', async () => {
    const bob = await lockedUser();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search by username, email or name').fill(bob.username);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`**/admin/users?q=${bob.username}`);
    assert.equal(await page.locator('tbody tr').count(), 1);
    await axeClean(checking, page);
    await page.getByRole('link', { name: bob.username }).click();
    await page.getByText(/^Sign-in locked until .* \(failed attempts: 2\)$/).waitFor();
    await axeClean(checking, page);
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('status').getByText(`${bob.username} is unlocked.`).waitFor();
    await page.getByText('Sign-in open').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Unlock' }).count(), 0);
    const signedIn = await passwordSignIn(new BrowserSim(server.issuer), bob);
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.headers.get('location'), '/account');
    const [unlocked] = await server.store.listEvents({ userId: bob.id, type: 'user.unlocked' });
    assert.equal(unlocked?.actor, `user:${admin.id}`);
  });

  it('signs a user out everywhere: their sessions end and their refresh token stops working', async () => {
    const alice = server.user;
    const tokens = (await (await exchange(server, await getCode(server, server.clients.confidential))).json()) as {
      refresh_token: string;
    };
    const { id, secret } = server.clients.confidential;
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByLabel('Search by username, email or name').fill('alice@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: alice.username, exact: true }).click();
    await page.getByText('Test confidential', { exact: true }).waitFor();
    assert.ok((await page.locator('h2:has-text("Sessions") + ul li').count()) >= 1, 'a session is listed');
    await axeClean(checking, page);
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page
      .getByRole('status')
      .getByText(/is signed out everywhere/)
      .waitFor();
    await page.getByText('Signed in nowhere.').waitFor();
    await page.getByText('No application has access.').waitFor();
    const refresh = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(id, secret!),
    );
    assert.equal(refresh.status, 400);
    assert.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant');
    const events = await server.store.listEvents({ userId: alice.id });
    const signedOut = events.find((e) => e.type === 'user.signed_out');
    const revoked = events.find((e) => e.type === 'token.revoked');
    assert.equal(signedOut?.actor, `user:${admin.id}`);
    assert.equal(revoked?.actor, `user:${admin.id}`);
    assert.equal(revoked?.clientId, id);
  });

  it('rotates a client secret: the new one shown once and accepted, the old one refused, or kept for the grace chosen', async () => {
    const { id, secret: old } = server.clients.confidential;
    await page.getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('heading', { name: 'Clients' }).waitFor();
    await axeClean(checking, page);
    await page.getByRole('link', { name: 'Test confidential', exact: true }).click();
    await page.getByLabel('Redirect URIs, one per line').waitFor();
    await axeClean(checking, page);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('Copy the secret now: it is shown only this once.').waitFor();
    const secret = (await page.locator('#client-secret').textContent())!.trim();
    assert.match(secret, /^[A-Za-z0-9_-]{30,}$/);
    await axeClean(checking, page);
    const attempt = (s: string) =>
      tokenRequest(server, { grant_type: 'refresh_token', refresh_token: 'none-such' }, basic(id, s));
    // The right ones first: a failure delays the client's next attempts (TESSERA_SIGNIN_FREE_FAILURES=1).
    assert.equal((await attempt(secret)).status, 400, 'the new secret authenticates (the token is what is wrong)');
    await page.getByRole('link', { name: 'Back to the client' }).click();
    assert.equal(await page.locator('#client-secret').count(), 0, 'shown once');
    // Rotated again, the previous secret kept working for an hour: both authenticate.
    await page.getByLabel('Keep the previous secret working for').selectOption({ label: 'One hour' });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/^The previous secret keeps working until /).waitFor();
    const next = (await page.locator('#client-secret').textContent())!.trim();
    assert.notEqual(next, secret);
    await axeClean(checking, page);
    assert.equal((await attempt(next)).status, 400, 'the newest secret authenticates');
    assert.equal((await attempt(secret)).status, 400, 'the previous one too, within its hour');
    assert.equal((await attempt(old!)).status, 401, 'the one rotated away with no grace is refused');
    await page.getByRole('link', { name: 'Back to the client' }).click();
    const [rotated] = await server.store.listEvents({ clientId: id, type: 'client.secret_rotated' });
    assert.equal(rotated?.actor, `user:${admin.id}`);
  });

  it('disables and enables a user, and resets their second factors', async () => {
    const frank = await newUser(server);
    await page.goto(`${server.issuer}/admin/users/${frank.id}`);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').getByText(`${frank.username} is disabled and signed out.`).waitFor();
    await page.getByText(/^Disabled: cannot sign in/).waitFor();
    assert.equal((await server.store.getUserById(frank.id))?.disabled, true);
    await axeClean(checking, page);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').getByText(`${frank.username} is enabled.`).waitFor();
    assert.equal((await server.store.getUserById(frank.id))?.disabled, false);
    await page.getByRole('button', { name: 'Reset second factors' }).click();
    await page
      .getByRole('status')
      .getByText(/recovery codes of .* are removed/)
      .waitFor();
    await page.getByLabel('Roles, separated by spaces').fill('support billing');
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.getByRole('status').getByText(`The roles of ${frank.username} are saved.`).waitFor();
    assert.deepEqual((await server.store.getUserById(frank.id))?.roles, ['support', 'billing']);
    await page.getByLabel('Roles, separated by spaces').fill('support Not-A-Role!');
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page
      .getByRole('alert')
      .getByText(/^Roles not saved: /)
      .waitFor();
    await axeClean(checking, page);
    assert.deepEqual((await server.store.getUserById(frank.id))?.roles, ['support', 'billing']);
    const events = await server.store.listEvents({ userId: frank.id });
    for (const type of ['user.disabled', 'user.enabled', 'mfa.reset', 'user.roles_changed'])
      assert.equal(events.find((e) => e.type === type)?.actor, `user:${admin.id}`, type);
  });

  it('an admin cannot take the admin role from themselves in the console', async () => {
    await page.goto(`${server.issuer}/admin/users/${admin.id}`);
    await page.getByLabel('Roles, separated by spaces').fill('');
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page
      .getByRole('alert')
      .getByText(/the admin role cannot be taken from yourself/)
      .waitFor();
    assert.deepEqual((await server.store.getUserById(admin.id))?.roles, [ADMIN_ROLE]);
  });

  it('creates a client, its secret shown once; a bad redirect URI is refused with the reason', async () => {
    await page.getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('link', { name: 'New client' }).click();
    await axeClean(checking, page);
    await page.getByLabel('Name').fill('Support desk');
    await page.getByLabel('Redirect URIs, one per line').fill('not a uri');
    await page.getByLabel('Scopes, separated by spaces').fill('openid profile');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page
      .getByRole('alert')
      .getByText(/^Not saved: /)
      .waitFor();
    await axeClean(checking, page);
    await page.getByLabel('Redirect URIs, one per line').fill('https://desk.example/callback');
    await page.getByLabel('refresh_token').check();
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByText('The client is created.').waitFor();
    const secret = (await page.locator('#client-secret').textContent())!.trim();
    const made = (await server.store.listClients()).find((c) => c.name === 'Support desk')!;
    assert.deepEqual(made.redirectUris, ['https://desk.example/callback']);
    assert.deepEqual(made.grantTypes.sort(), ['authorization_code', 'refresh_token']);
    assert.deepEqual(made.scopes, ['openid', 'profile']);
    const check = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      basic(made.clientId, secret),
    );
    assert.equal(check.status, 400, 'the secret shown authenticates the client');
    const [created] = await server.store.listEvents({ clientId: made.clientId, type: 'client.created' });
    assert.equal(created?.actor, `user:${admin.id}`);
  });

  it('the event log shows each action with its actor, filtered by type and user', async () => {
    await page.getByRole('link', { name: 'Event log' }).click();
    await page.getByRole('heading', { name: 'Event log' }).waitFor();
    await axeClean(checking, page);
    const actor = `user:${admin.id} (${admin.username})`;
    for (const type of ['user.unlocked', 'user.signed_out', 'token.revoked', 'client.secret_rotated']) {
      await page.getByLabel('Type').selectOption(type);
      await page.getByRole('button', { name: 'Filter' }).click();
      const row = page.locator('tbody tr').first();
      await row.getByText(type).waitFor();
      assert.equal(await row.getByText(actor).count(), 1, `${type} names its actor`);
    }
    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('User').fill(server.user.username);
    await page.getByRole('button', { name: 'Filter' }).click();
    const users = await page.locator('tbody tr td:nth-child(3)').allTextContents();
    assert.ok(users.length > 0 && users.every((u) => u === server.user.username), users.join());
  });

  it('deleting a client asks for a recent sign-in first', async () => {
    await page.getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('link', { name: 'Test narrow', exact: true }).click();
    const clientId = server.clients.narrow.id;
    server.clock.offset += 10 * 60;
    await page.getByRole('button', { name: 'Delete client' }).click();
    await page.waitForURL('**/admin/login?reauth=1');
    await page.getByText('This action needs a recent sign-in: sign in again first.').waitFor();
    assert.ok(await server.store.getClient(clientId), 'not deleted yet');
    await fillPassword(page, admin);
    await page.waitForURL('**/login/totp?pending=*');
    nextStep();
    await page.getByLabel('Authenticator code').fill(codeOf(totp));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL('**/admin/users');
    await page.goto(`${server.issuer}/admin/clients/${clientId}`);
    await page.getByRole('button', { name: 'Delete client' }).click();
    await page.getByRole('status').getByText('Client Test narrow deleted.').waitFor();
    assert.equal(await server.store.getClient(clientId, { suspended: true }), undefined);
    const [deleted] = await server.store.listEvents({ clientId, type: 'client.deleted' });
    assert.equal(deleted?.actor, `user:${admin.id}`);
  });

  it('rotates signing keys: staged, and now, which asks for a recent sign-in', async () => {
    await page.getByRole('link', { name: 'Signing keys' }).click();
    await page.getByRole('heading', { name: 'Signing keys' }).waitFor();
    await axeClean(checking, page);
    await page.getByRole('button', { name: 'Rotate RS256', exact: true }).click();
    await page
      .getByRole('status')
      .getByText(/^New key .* is published and signs from /)
      .waitFor();
    // Signed in again (with the app) moments ago: a rotation now needs nothing more.
    await page.getByRole('button', { name: 'Rotate ES256 now' }).click();
    await page
      .getByRole('status')
      .getByText(/^New key .* signs from now on/)
      .waitFor();
    const rotations = await server.store.listEvents({ type: 'key.rotated' });
    assert.equal(rotations.length, 2);
    assert.ok(rotations.every((e) => e.actor === `user:${admin.id}`));
    server.clock.offset += 10 * 60;
    await page.getByRole('button', { name: 'Rotate RS256 now' }).click();
    await page.waitForURL('**/admin/login?reauth=1');
    assert.equal((await server.store.listEvents({ type: 'key.rotated' })).length, 2, 'nothing rotated');
    await fillPassword(page, admin);
    await page.waitForURL('**/login/totp?pending=*');
    nextStep();
    await page.getByLabel('Authenticator code').fill(codeOf(totp));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL('**/admin/users');
  });

  it('lists webhooks and their delivery log; a failed delivery is made due again', async () => {
    const input = { url: 'https://hooks.example/in', events: ['user.enabled'], ownerId: null, allowPrivate: false };
    const { webhook } = await createWebhook(server.store, server.secret, input, now(), CLI);
    const gus = await newUser(server);
    await enableUser(server.store, (await server.store.getUserById(gus.id))!, { now: now() });
    const [delivery] = await server.store.listDeliveries(webhook.id, 10);
    const attempt = { deliveryId: delivery!.id, attempt: 1, at: now(), status: 500, durationMs: 3, error: null };
    await server.store.recordAttempt(attempt, { status: 'failed' });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await axeClean(checking, page);
    await page.getByRole('link', { name: 'https://hooks.example/in' }).click();
    await page.getByRole('heading', { name: 'Deliveries to https://hooks.example/in' }).waitFor();
    await page.locator('tbody tr').first().getByText('failed').waitFor();
    await axeClean(checking, page);
    await page.getByRole('button', { name: /^Deliver again: user\.enabled of / }).click();
    await page.getByRole('status').getByText('The delivery is due again now.').waitFor();
    assert.equal((await server.store.getDelivery(delivery!.id))?.status, 'pending');
  });

  it('a form without the token, with a wrong one, or from another origin is refused and changes nothing', async () => {
    const bob = await newUser(server);
    const target = `${server.issuer}/admin/users/${bob.id}/disable`;
    await page.goto(`${server.issuer}/admin/users/${bob.id}`);
    const csrf = (await page.locator('form[action$="/disable"] input[name=csrf]').getAttribute('value'))!;
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      page.request.post(target, { form, headers, maxRedirects: 0 });
    assert.equal((await post({})).status(), 403, 'no token');
    assert.equal((await post({ csrf: `${csrf.slice(0, -2)}xx` })).status(), 403, 'a wrong token');
    assert.equal((await post({ csrf }, { origin: 'https://elsewhere.example' })).status(), 403, 'another origin');
    assert.equal((await post({ csrf }, { 'sec-fetch-site': 'cross-site' })).status(), 403, 'another site');
    assert.equal((await server.store.getUserById(bob.id))?.disabled, false);
    assert.deepEqual(await server.store.listEvents({ userId: bob.id, type: 'user.disabled' }), []);
    const refused = await page.request.post(target, { form: {}, maxRedirects: 0 });
    assert.match(await refused.text(), /<html lang="en">/);
    // The same form with its token, from the console: done.
    const done = await post({ csrf }, { origin: new URL(server.issuer).origin });
    assert.equal(done.status(), 303);
    assert.equal((await server.store.getUserById(bob.id))?.disabled, true);
  });

  it('a signed-in user without the admin role gets 403; nobody signed in goes to the sign-in', async () => {
    const carol = await newUser(server);
    const other = await window();
    await other.goto(`${server.issuer}/account/login`);
    await fillPassword(other, carol);
    await other.waitForURL('**/account');
    const answer = await other.goto(`${server.issuer}/admin/users`);
    assert.equal(answer?.status(), 403);
    await other.getByText('The admin console is for people with the admin role.').waitFor();
    await axeClean(checking, other);
    for (const path of ['/admin', '/admin/events', `/admin/clients/${server.clients.public.id}`]) {
      assert.equal((await new BrowserSim(server.issuer).request(path)).headers.get('location'), '/admin/login', path);
      const forbidden = await other.request.get(`${server.issuer}${path}`, { maxRedirects: 0 });
      assert.equal(forbidden.status(), 403, path);
    }
  });

  it('an admin signed in with a password alone steps up; with TESSERA_ADMIN_MFA=off they need not', async () => {
    // No second factor yet: the account page's sign-in is the password alone.
    const dana = await makeAdmin(server);
    const sim = new BrowserSim(server.issuer);
    assert.equal((await passwordSignIn(sim, dana)).headers.get('location'), '/account');
    const stepUp = await sim.request('/admin/users');
    assert.equal(stepUp.status, 302);
    assert.match(stepUp.headers.get('location') ?? '', /^\/login\/totp\?pending=/);
    const enrol = await sim.request(stepUp.headers.get('location')!);
    assert.match(await enrol.text(), /Set up an authenticator app/);

    const erin = await makeAdmin(open);
    const plain = new BrowserSim(open.issuer);
    assert.equal((await passwordSignIn(plain, erin)).headers.get('location'), '/account');
    const console = await plain.request('/admin/users');
    assert.equal(console.status, 200);
    assert.match(await console.text(), /<h1>Users<\/h1>/);
  });
});
