// A single-page app with oidc-client-ts, in real Chromium: a page served by the test on a loopback
// origin signs in through Tessera's pages, gets its tokens, calls userinfo and refreshes, all from
// browser code, across origins (CORS); a page on an origin the client does not allow cannot read a
// token response.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { createClient } from '../../src/admin/clients.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const LIBRARY = readFileSync('node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js', 'utf8');

/** A static site on 127.0.0.1 and a port of its own: the library and the pages given. */
async function site(pages: Record<string, string>): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path === '/oidc-client-ts.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(LIBRARY);
    const page = pages[path];
    if (!page) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe('oidc-client-ts in Chromium', { skip: needsChromium }, () => {
  let tessera: TestServer;
  let browser: Browser;
  let app: { server: Server; origin: string };
  let elsewhere: { server: Server; origin: string };

  before(async () => {
    tessera = await startServer();
    // The app's pages need its origin and client id, which exist only once it listens: filled in below.
    const pages: Record<string, string> = {};
    app = await site(pages);
    const { client } = await createClient(tessera.store, tessera.config, {
      name: 'SPA with oidc-client-ts',
      redirectUris: [`${app.origin}/callback.html`],
      scopes: ['openid', 'profile', 'email', 'apps'],
      public: true,
    });
    const settings = JSON.stringify({
      authority: tessera.issuer,
      client_id: client.clientId,
      redirect_uri: `${app.origin}/callback.html`,
      response_type: 'code',
      scope: 'openid profile apps',
      automaticSilentRenew: false,
      loadUserInfo: false,
    });
    const head = `<!doctype html><meta charset="utf-8"><script src="/oidc-client-ts.js"></script>`;
    pages['/index.html'] = `${head}<script>new oidc.UserManager(${settings}).signinRedirect();</script>`;
    pages['/callback.html'] = `${head}<script>
(async () => {
  try {
    const manager = new oidc.UserManager(${settings});
    const user = await manager.signinRedirectCallback();
    const info = await (await fetch(${JSON.stringify(`${tessera.issuer}/oauth2/userinfo`)}, {
      headers: { authorization: 'Bearer ' + user.access_token },
    })).json();
    const renewed = await manager.signinSilent();
    window.result = {
      sub: user.profile.sub,
      hadRefreshToken: Boolean(user.refresh_token),
      userinfo: info,
      renewedAccessToken: renewed.access_token !== user.access_token,
      renewedRefreshToken: renewed.refresh_token !== user.refresh_token,
    };
  } catch (err) {
    window.result = { error: String(err) };
  }
})();
</script>`;
    elsewhere = await site({
      '/steal.html': `<!doctype html><script>
fetch(${JSON.stringify(`${tessera.issuer}/oauth2/token`)}, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: 'grant_type=refresh_token&refresh_token=x&client_id=${client.clientId}',
}).then((r) => (window.result = { read: r.status }), (e) => (window.result = { blocked: String(e) }));
</script>`,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    app?.server.close();
    elsewhere?.server.close();
    await tessera?.close();
  });

  it('signs in through Tessera, reads userinfo and refreshes, from browser code', async () => {
    const page = await browser.newPage();
    await page.goto(`${app.origin}/index.html`);
    await page.waitForURL(/\/login\?/);
    await page.fill('#username', 'alice');
    await page.fill('#password', tessera.user.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/consent\?/);
    await page.click('button[value=allow]');
    await page.waitForURL(/\/callback\.html\?/);
    await page.waitForFunction('window.result !== undefined');
    const result = (await page.evaluate('window.result')) as Record<string, unknown>;
    assert.equal(result.error, undefined, String(result.error));
    assert.equal(result.sub, tessera.user.id);
    assert.equal(result.hadRefreshToken, true);
    assert.deepEqual((result.userinfo as { sub: string }).sub, tessera.user.id);
    assert.equal(result.renewedAccessToken, true);
    assert.equal(result.renewedRefreshToken, true);
    await page.close();
  });

  it('a page on an origin the client does not allow cannot read a token response', async () => {
    const page = await browser.newPage();
    await page.goto(`${elsewhere.origin}/steal.html`);
    await page.waitForFunction('window.result !== undefined');
    const result = (await page.evaluate('window.result')) as Record<string, unknown>;
    assert.equal(result.read, undefined);
    assert.match(String(result.blocked), /TypeError|Failed to fetch/);
    await page.close();
  });
});
