// The account page's upstream providers, in real Chromium: a user signed in with a password links
// their account at node-oidc-provider, signs in with it instead, and unlinks it; a user the provider
// made (no password) cannot unlink their only way in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type OidcUpstream, startOidcUpstream, tessera } from '../helpers/upstreams.ts';

describe('linking and unlinking upstream providers in Chromium', { skip: needsChromium }, () => {
  let server: TestServer;
  let upstream: OidcUpstream;
  let browser: Browser;

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    upstream = await startOidcUpstream({
      redirectUris: ['corp', 'other'].map((id) => `${server.issuer}/login/upstream/${id}/callback`),
    });
    for (const [id, name] of [
      ['corp', 'Corp SSO'],
      ['other', 'Other IdP'],
    ] as const) {
      const made = await tessera(
        server,
        ['providers', 'create', '--type', 'oidc', '--id', id, '--name', name, '--issuer', upstream.issuer].concat([
          '--client-id',
          upstream.clientId,
          '--client-secret-stdin',
        ]),
        upstream.clientSecret,
      );
      assert.equal(made.code, 0, made.out);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await upstream?.close();
    await server?.close();
  });

  const linkedSection = (page: Page, name: string) => page.locator('section.linked-provider', { hasText: name });

  it('links a provider from the account page, signs in with it, and unlinks it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.issuer}/account/login`);
    await page.fill('#username', 'alice');
    await page.fill('#password', server.user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.issuer}/account`);

    upstream.next = {
      account: { sub: 'alice-at-corp', email: 'alice@corp.example', email_verified: true },
      amr: ['pwd'],
    };
    await page.getByRole('button', { name: 'Link Corp SSO' }).click();
    await page.waitForURL(`${server.issuer}/account?upstream=linked`);
    await page.getByText('Linked: you can sign in with it from now on.').waitFor();
    assert.match(await linkedSection(page, 'Corp SSO').innerText(), /as alice@corp\.example/);
    assert.equal((await server.store.getLink('corp', 'alice-at-corp'))?.userId, server.user.id);

    // Signed out, alice signs in with the provider alone.
    await page.goto(`${server.issuer}/oauth2/logout`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/logout\/done/);
    await page.goto(`${server.issuer}/account/login`);
    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).click();
    await page.waitForURL(`${server.issuer}/account`);
    await page.getByText('Signed in as alice.').waitFor();

    await linkedSection(page, 'Corp SSO').getByRole('button', { name: 'Unlink Corp SSO' }).click();
    await page.waitForURL(`${server.issuer}/account?upstream=unlinked`);
    await page.getByRole('button', { name: 'Link Corp SSO' }).waitFor();
    assert.equal(await linkedSection(page, 'Corp SSO').count(), 0);
    assert.equal(await server.store.getLink('corp', 'alice-at-corp'), undefined);
    const events = await server.store.listEvents({ userId: server.user.id, limit: 20 });
    const by = (type: string) => events.find((e) => e.type === type)?.data;
    assert.deepEqual(by('user.upstream_linked'), { provider: 'corp', subject: 'alice-at-corp', by: 'account_page' });
    assert.deepEqual(by('user.upstream_unlinked'), { provider: 'corp', subject: 'alice-at-corp' });
    await context.close();
  });

  it('keeps the only way in of a user the provider made', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    upstream.next = {
      account: { sub: 'solo', preferred_username: 'solo', email: 'solo@corp.example', email_verified: true },
      amr: ['pwd'],
    };
    await page.goto(`${server.issuer}/account/login`);
    await page.getByRole('button', { name: 'Sign in with Corp SSO' }).click();
    await page.waitForURL(`${server.issuer}/account`);
    await page.getByText('Signed in as solo.').waitFor();
    const corp = linkedSection(page, 'Corp SSO');
    await corp.getByText('it cannot be unlinked while it is your only way in').waitFor();
    assert.equal(await corp.getByRole('button').count(), 0);
    // No password to change: the provider is how solo signs in.
    assert.equal(await page.locator('form[action="/account/password"]').count(), 0);

    // An unlink posted anyway (with the page's own form token) is refused.
    const csrf = await page.locator('form[action="/account/upstream/link"] input[name=csrf]').getAttribute('value');
    await page.evaluate(`(() => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = '/account/upstream/unlink';
      for (const [name, value] of [['csrf', ${JSON.stringify(csrf)}], ['provider', 'corp']]) {
        const input = document.createElement('input');
        Object.assign(input, { type: 'hidden', name, value });
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    })()`);
    await page.waitForURL(`${server.issuer}/account?upstream=last`);
    await page.getByText('It is your only way to sign in, so it stays linked.').waitFor();
    const solo = await server.store.getUserByUsername('solo');
    assert.equal((await server.store.listLinks(solo!.id)).length, 1);

    // With a second provider linked, either may go.
    upstream.next = { account: { sub: 'solo-elsewhere' }, amr: ['pwd'] };
    await page.getByRole('button', { name: 'Link Other IdP' }).click();
    await page.waitForURL(`${server.issuer}/account?upstream=linked`);
    await corp.getByRole('button', { name: 'Unlink Corp SSO' }).click();
    await page.waitForURL(`${server.issuer}/account?upstream=unlinked`);
    assert.deepEqual(
      (await server.store.listLinks(solo!.id)).map((l) => l.providerId),
      ['other'],
    );
    await context.close();
  });
});
