// A real browser: headless Chromium opens the authorization URL, signs in, consents, and lands on the
// client's redirect URI with a code that the test exchanges for tokens.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { createHash, randomBytes } from 'node:crypto';
import { createClient } from '../../src/admin/clients.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('real browser (headless Chromium)', { skip: needsChromium }, () => {
  let server: TestServer;
  let browser: Browser;
  let clientApp: Server;
  let redirectUri: string;
  const received: URL[] = [];

  before(async () => {
    server = await startServer();
    // The client application: a tiny server that records the redirect.
    clientApp = createServer((req, res) => {
      const url = new URL(req.url!, redirectUri);
      if (url.pathname === '/callback') received.push(url);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Client</title><p>Signed in.</p>');
    });
    await new Promise<void>((resolve) => clientApp.listen(0, '127.0.0.1', resolve));
    const address = clientApp.address();
    redirectUri = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/callback`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => clientApp?.close(resolve));
    await server?.close();
  });

  for (const variant of ['confidential', 'public'] as const) {
    it(`${variant} client: sign in, consent, code, tokens`, async () => {
      const { client, clientSecret } = await createClient(server.store, server.config, {
        name: `Browser ${variant} app`,
        redirectUris: [redirectUri],
        scopes: ['openid', 'profile', 'apps'],
        public: variant === 'public',
      });
      const verifier = randomBytes(32).toString('base64url');
      const authorize = new URL(`${server.issuer}/oauth2/authorize`);
      authorize.search = new URLSearchParams({
        client_id: client.clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid profile apps',
        state: `state-${variant}`,
        ...(variant === 'public'
          ? { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' }
          : {}),
      }).toString();

      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(authorize.href);
      assert.match((await page.textContent('body')) ?? '', new RegExp(`Browser ${variant} app`));
      await page.getByLabel('Username').fill(server.user.username);
      await page.getByLabel('Password').fill(server.user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      assert.match((await page.textContent('body')) ?? '', /Manage your apps/);
      await Promise.all([page.waitForURL(`${redirectUri}?**`), page.getByRole('button', { name: 'Allow' }).click()]);
      await context.close();

      const callback = received.at(-1)!;
      assert.equal(callback.searchParams.get('state'), `state-${variant}`);
      assert.equal(callback.searchParams.get('iss'), server.issuer);
      const code = callback.searchParams.get('code')!;
      const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (variant === 'public') {
        body.set('client_id', client.clientId);
        body.set('code_verifier', verifier);
      } else {
        headers.authorization = `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`;
      }
      const response = await fetch(`${server.issuer}/oauth2/token`, { method: 'POST', headers, body });
      assert.equal(response.status, 200);
      const tokens = (await response.json()) as Record<string, unknown>;
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.scope, 'openid profile apps');
      assert.ok(
        typeof tokens.access_token === 'string' &&
          typeof tokens.id_token === 'string' &&
          typeof tokens.refresh_token === 'string',
      );
    });
  }
});
