// The admin console's APIs (RFC 8707 resources), webhooks and upstream providers in Chromium with
// JavaScript off: an admin registers an API (a bad scope refused with the reason), changes it and
// deletes it (after signing in again, the sign-in no longer recent); creates a webhook (its signing
// secret shown once), changes its event types, sends it a test delivery, rotates its secret (the
// previous one signing too for a day) and deletes it; adds an OpenID Connect provider (one
// whose discovery document cannot be read refused on the form, with the reason), changes and deletes
// it. axe-core finds no WCAG A/AA violation on any page; each change is an event with the admin as its
// actor; a form without the token or from another origin is refused and changes nothing.
// TESSERA_ADMIN_MFA=off: the password alone opens the console.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { changeUserRoles } from '../../src/admin/roles.ts';
import { ADMIN_ROLE } from '../../src/store/users.ts';
import type { EventType } from '../../src/events/index.ts';
import { axeClean } from '../helpers/axe.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { newUser } from '../helpers/passkeys.ts';
import { freePort, startServer, type TestServer } from '../helpers/server.ts';
import { startOidcUpstream } from '../helpers/upstreams.ts';
import { callbackUri } from '../../src/upstream/index.ts';

describe(
  'the admin console: APIs, webhooks and providers, in Chromium without JavaScript',
  { skip: needsChromium },
  () => {
    let server: TestServer;
    let browser: Browser;
    let checking: BrowserContext;
    let page: Page;
    let admin: { id: string; username: string; password: string };
    const API = 'https://api.example.com/orders';

    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    const actorOf = async (type: EventType) => {
      const events = await server.store.listEvents({ type });
      assert.equal(events.length, 1, type);
      return events[0]!.actor;
    };

    async function signIn() {
      await page.getByLabel('Username').fill(admin.username);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL('**/admin/users');
    }

    before(async () => {
      server = await startServer({ env: { TESSERA_ADMIN_MFA: 'off', TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      checking = await browser.newContext();
      admin = await newUser(server);
      await changeUserRoles(server.store, admin.username, { add: [ADMIN_ROLE] }, { now: now() });
      const context = await browser.newContext({ javaScriptEnabled: false });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${server.issuer}/admin`);
      await page.waitForURL('**/admin/login');
      await signIn();
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it('registers an API, a bad scope refused with the reason', async () => {
      await page.getByRole('link', { name: 'APIs' }).click();
      await page.getByRole('heading', { name: 'APIs' }).waitFor();
      await page.getByText('No APIs registered.').waitFor();
      await axeClean(checking, page);
      await page.getByRole('link', { name: 'New API' }).click();
      await axeClean(checking, page);
      await page.getByLabel('URI', { exact: true }).fill(API);
      await page.getByLabel('Scopes, separated by spaces').fill('apps openid');
      await page.getByRole('button', { name: 'Register API' }).click();
      await page
        .getByRole('alert')
        .getByText(/^Not saved: --scope: openid is not an API scope/)
        .waitFor();
      await axeClean(checking, page);
      assert.equal(await server.store.getResource(API), undefined);
      await page.getByLabel('Scopes, separated by spaces').fill('apps');
      await page.getByLabel("Name (the URI's host if left empty)").fill('Orders');
      await page.getByRole('button', { name: 'Register API' }).click();
      await page.getByRole('heading', { name: 'API Orders' }).waitFor();
      await page.getByRole('status').getByText('Saved.').waitFor();
      await axeClean(checking, page);
      const made = await server.store.getResource(API);
      assert.deepEqual([made?.name, made?.scopes], ['Orders', ['apps']]);
      assert.equal(await actorOf('resource.created'), `user:${admin.id}`);
      await page.getByRole('link', { name: 'APIs' }).click();
      await page.getByRole('link', { name: 'Orders' }).waitFor();
    });

    it('changes an API, and deletes it after signing in again', async () => {
      await page.goto(`${server.issuer}/admin/resources/${encodeURIComponent(API)}`);
      await page.getByLabel("Name (the URI's host if left empty)").fill('Orders API');
      await page.getByLabel('Scopes, separated by spaces').fill('apps webhooks');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'API Orders API' }).waitFor();
      const changed = await server.store.getResource(API);
      assert.deepEqual([changed?.name, changed?.scopes], ['Orders API', ['apps', 'webhooks']]);
      assert.equal(await actorOf('resource.updated'), `user:${admin.id}`);
      server.clock.offset += 10 * 60;
      await page.getByRole('button', { name: 'Delete API' }).click();
      await page.waitForURL('**/admin/login?reauth=1');
      assert.ok(await server.store.getResource(API), 'not deleted yet');
      await signIn();
      await page.goto(`${server.issuer}/admin/resources/${encodeURIComponent(API)}`);
      await page.getByRole('button', { name: 'Delete API' }).click();
      await page.getByRole('status').getByText(`API ${API} deleted.`).waitFor();
      assert.equal(await server.store.getResource(API), undefined);
      assert.equal(await actorOf('resource.deleted'), `user:${admin.id}`);
    });

    it('creates a webhook, its secret shown once; changes its event types, tests it, rotates its secret and deletes it', async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('link', { name: 'New webhook' }).click();
      await axeClean(checking, page);
      await page.getByLabel('Address').fill('ftp://hooks.example/in');
      await page.getByLabel('Event types, separated by spaces (or all)').fill('user.enabled');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page
        .getByRole('alert')
        .getByText(/^Not saved: url /)
        .waitFor();
      await axeClean(checking, page);
      assert.deepEqual(await server.store.listWebhooks(), []);
      await page.getByLabel('Address').fill('https://hooks.example/in');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByText('Copy the secret now: it is shown only this once.').waitFor();
      const secret = (await page.locator('#webhook-secret').textContent())!.trim();
      assert.ok(secret.length >= 20, secret);
      await axeClean(checking, page);
      const [webhook] = await server.store.listWebhooks();
      assert.deepEqual(
        [webhook?.url, webhook?.events, webhook?.ownerId],
        ['https://hooks.example/in', 'user.enabled', null],
      );
      assert.equal(await actorOf('webhook.created'), `user:${admin.id}`);

      await page.getByRole('link', { name: 'To the webhook' }).click();
      await page.getByRole('heading', { name: 'Deliveries to https://hooks.example/in' }).waitFor();
      assert.equal(await page.locator('#webhook-secret').count(), 0, 'shown once');
      assert.ok(!(await page.content()).includes(secret), 'shown once');
      await axeClean(checking, page);
      await page.getByLabel('Event types, separated by spaces (or all)').fill('user.enabled user.disabled');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').getByText('Saved.').waitFor();
      assert.equal((await server.store.getWebhook(webhook!.id))?.events, 'user.enabled user.disabled');
      assert.equal(await actorOf('webhook.updated'), `user:${admin.id}`);
      await page.getByLabel('Event types, separated by spaces (or all)').fill('no.such_event');
      await page.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('alert')
        .getByText(/^Not saved: /)
        .waitFor();
      await axeClean(checking, page);
      assert.equal((await server.store.getWebhook(webhook!.id))?.events, 'user.enabled user.disabled');
      // A test delivery, queued to this webhook alone.
      await page.getByRole('button', { name: 'Send a test delivery' }).click();
      await page.getByRole('status').getByText('A test delivery is on its way: it appears in the log below.').waitFor();
      assert.equal(await actorOf('webhook.tested'), `user:${admin.id}`);
      const deliveries = await server.store.listDeliveries(webhook!.id, 10);
      assert.deepEqual(
        deliveries.map((d) => d.eventType),
        ['webhook.test'],
      );
      // The secret rotated, shown once, the previous one signing too for the day chosen.
      const beforeRotation = await server.store.getWebhook(webhook!.id);
      await page.getByLabel('Keep the previous secret signing too for').selectOption({ label: 'One day' });
      await page.getByRole('button', { name: 'Rotate the signing secret' }).click();
      await page.getByRole('status').getByText('The signing secret was rotated.').waitFor();
      await page.getByText(/^Deliveries are signed with the previous secret too until /).waitFor();
      const rotated = (await page.locator('#webhook-secret').textContent())!.trim();
      assert.ok(rotated.length >= 20 && rotated !== secret, rotated);
      await axeClean(checking, page);
      const afterRotation = await server.store.getWebhook(webhook!.id);
      assert.equal(afterRotation?.previousSecretEnc, beforeRotation?.secretEnc);
      assert.ok(Math.abs(afterRotation!.previousUntil! - (now() + 86_400)) <= 5, `${afterRotation?.previousUntil}`);
      assert.equal(await actorOf('webhook.secret_rotated'), `user:${admin.id}`);
      await page.getByRole('link', { name: 'To the webhook' }).click();
      await page.getByRole('heading', { name: 'Deliveries to https://hooks.example/in' }).waitFor();
      assert.ok(!(await page.content()).includes(rotated), 'shown once');
      await page.getByRole('button', { name: 'Delete webhook' }).click();
      await page.getByRole('status').getByText('Webhook to https://hooks.example/in deleted.').waitFor();
      assert.equal(await server.store.getWebhook(webhook!.id), undefined);
      assert.equal(await actorOf('webhook.deleted'), `user:${admin.id}`);
    });

    it('adds an OpenID Connect provider (one whose discovery cannot be read refused), changes and deletes it; adds GitHub', async () => {
      const upstream = await startOidcUpstream({ redirectUris: [callbackUri(server.issuer, 'corp')] });
      try {
        await page.getByRole('link', { name: 'Sign-in providers' }).click();
        await page.getByRole('heading', { name: 'Sign-in providers' }).waitFor();
        await page.getByText('No providers.').waitFor();
        await axeClean(checking, page);
        await page.getByRole('link', { name: 'New provider' }).click();
        await axeClean(checking, page);
        await page.getByLabel('Type').selectOption('oidc');
        await page.getByLabel('ID (from the name if left empty)').fill('corp');
        await page.getByLabel('Name', { exact: true }).fill('Corp');
        await page.getByLabel('Issuer').fill(`http://localhost:${await freePort()}`);
        await page.getByLabel('Client ID at the provider').fill(upstream.clientId);
        await page.getByLabel('Client secret at the provider').fill(upstream.clientSecret);
        await page.getByRole('button', { name: 'Add provider' }).click();
        await page
          .getByRole('alert')
          .getByText(/^Not saved: the discovery document of http:\/\/localhost:\d+ could not be read/)
          .waitFor();
        await axeClean(checking, page);
        assert.deepEqual(await server.store.listProviders(), []);
        await page.getByLabel('Issuer').fill(upstream.issuer);
        await page.getByLabel('Client secret at the provider').fill(upstream.clientSecret);
        await page.getByLabel('Inside our network (private addresses allowed)').check();
        await page.getByRole('button', { name: 'Add provider' }).click();
        await page.getByRole('heading', { name: 'Provider Corp' }).waitFor();
        await page.getByText(callbackUri(server.issuer, 'corp')).waitFor();
        await axeClean(checking, page);
        const made = await server.store.getProvider('corp');
        assert.deepEqual([made?.type, made?.issuer, made?.clientId], ['oidc', upstream.issuer, upstream.clientId]);
        assert.equal(made?.allowPrivateNetwork, true);
        assert.ok(!(await page.content()).includes(upstream.clientSecret), 'the secret is never shown back');
        assert.equal(await actorOf('provider.created'), `user:${admin.id}`);

        await page.getByLabel('Name', { exact: true }).fill('Corp SSO');
        await page.getByLabel('Trust the email addresses it says are verified').check();
        await page.getByLabel('Count its own second factor (it says the person signed in with MFA)').check();
        await page.getByLabel('Accept its identity assertions for apps (ID-JAG)').check();
        await page
          .getByLabel('Email domains that go straight to it (space-separated)')
          .fill('corp.example @Eng.Corp.Example');
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('status').getByText('Saved.').waitFor();
        const changed = await server.store.getProvider('corp');
        assert.deepEqual([changed?.name, changed?.trustEmail], ['Corp SSO', true]);
        assert.deepEqual([changed?.trustUpstreamMfa, changed?.acceptIdJag], [true, true]);
        assert.deepEqual(changed?.loginHintDomains, ['corp.example', 'eng.corp.example']);
        assert.equal(changed?.clientSecretEnc, made?.clientSecretEnc, 'an empty secret field leaves it unchanged');
        assert.equal(await actorOf('provider.updated'), `user:${admin.id}`);
        // The form shows them as stored; emptied and unticked, they are gone.
        assert.equal(
          await page.getByLabel('Email domains that go straight to it (space-separated)').inputValue(),
          'corp.example eng.corp.example',
        );
        await page.getByLabel('Email domains that go straight to it (space-separated)').fill('');
        await page.getByLabel('Accept its identity assertions for apps (ID-JAG)').uncheck();
        await page.getByRole('button', { name: 'Save' }).click();
        await page.getByRole('status').getByText('Saved.').waitFor();
        const emptied = await server.store.getProvider('corp');
        assert.deepEqual(
          [emptied?.loginHintDomains, emptied?.acceptIdJag, emptied?.trustUpstreamMfa],
          [[], false, true],
        );
        await page.getByRole('button', { name: 'Delete provider' }).click();
        await page.getByRole('status').getByText('Provider corp deleted.').waitFor();
        assert.equal(await server.store.getProvider('corp'), undefined);
        assert.equal(await actorOf('provider.deleted'), `user:${admin.id}`);
        // GitHub: no discovery document, github.com unless an address is given.
        await page.getByRole('link', { name: 'New provider' }).click();
        await page.getByLabel('Type').selectOption('github');
        await page.getByLabel('Name', { exact: true }).fill('GitHub');
        await page.getByLabel('Client ID at the provider').fill('Iv1.abc');
        await page.getByLabel('Client secret at the provider').fill('gh-secret');
        await page.getByRole('button', { name: 'Add provider' }).click();
        await page.getByRole('heading', { name: 'Provider GitHub' }).waitFor();
        const github = (await server.store.listProviders())[0];
        assert.deepEqual([github?.id, github?.type, github?.clientId], ['github', 'github', 'Iv1.abc']);
        // GitHub neither says how a person signed in nor signs identity assertions: not offered.
        assert.equal(await page.getByLabel('Accept its identity assertions for apps (ID-JAG)').count(), 0);
        assert.equal(
          await page.getByLabel('Count its own second factor (it says the person signed in with MFA)').count(),
          0,
        );
      } finally {
        await upstream.close();
      }
    });

    it('a form without the token or from another origin is refused and changes nothing', async () => {
      await page.goto(`${server.issuer}/admin/resources/new`);
      const csrf = (await page.locator('input[name=csrf]').getAttribute('value'))!;
      const origin = new URL(server.issuer).origin;
      const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
        page.request.post(`${server.issuer}${path}`, { form, headers, maxRedirects: 0 });
      const api = { uri: 'https://forged.example/', scope: 'apps' };
      const hook = { url: 'https://forged.example/in', events: 'all' };
      const provider = { type: 'github', id: 'forged', client_id: 'x', client_secret: 'y' };
      for (const [path, form] of [
        ['/admin/resources/new', api],
        ['/admin/webhooks/new', hook],
        ['/admin/providers/new', provider],
      ] as const) {
        assert.equal((await post(path, form, { origin })).status(), 403, `${path}: no token`);
        const foreign = await post(path, { ...form, csrf }, { origin: 'https://elsewhere.example' });
        assert.equal(foreign.status(), 403, `${path}: another origin`);
      }
      assert.equal(await server.store.getResource(api.uri), undefined);
      assert.deepEqual(await server.store.listWebhooks(), []);
      assert.equal(await server.store.getProvider('forged'), undefined);
      // The same form with its token, from the console: done.
      assert.equal((await post('/admin/resources/new', { ...api, csrf }, { origin })).status(), 303);
      assert.ok(await server.store.getResource(api.uri));
      // A webhook's test and rotation: refused the same way, nothing queued or rotated.
      assert.equal((await post('/admin/webhooks/new', { ...hook, csrf }, { origin })).status(), 200);
      const [made] = await server.store.listWebhooks();
      for (const path of [`/admin/webhooks/${made!.id}/test`, `/admin/webhooks/${made!.id}/rotate-secret`]) {
        assert.equal((await post(path, { grace: '0' }, { origin })).status(), 403, `${path}: no token`);
        const foreign = await post(path, { grace: '0', csrf }, { origin: 'https://elsewhere.example' });
        assert.equal(foreign.status(), 403, `${path}: another origin`);
      }
      assert.equal((await server.store.getWebhook(made!.id))?.secretEnc, made!.secretEnc);
      const tests = (await server.store.listDeliveries(made!.id, 10)).filter((d) => d.eventType === 'webhook.test');
      assert.deepEqual(tests, []);
    });
  },
);
