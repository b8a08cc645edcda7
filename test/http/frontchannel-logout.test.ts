// OpenID Connect Front-Channel Logout 1.0: discovery; frontchannel_logout_uri and
// frontchannel_logout_session_required set by `clients update` and by dynamic registration, bad ones
// refused; after RP-initiated logout, the signed-out page loads the page of each client signed in from
// the session in a hidden iframe (with `iss` and `sid` for the client that requires them), its CSP
// framing those origins only, then goes on to the post_logout_redirect_uri; and Chromium really loads
// the client's page and goes on.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Page } from 'playwright-core';
import { run } from '../../src/cli/main.ts';
import { PAGE_CSP } from '../../src/http/plugins/html.ts';
import { BrowserSim, unescapeHtml } from '../helpers/browser-sim.ts';
import { CHROMIUM, CHROMIUM_ARGS, needsChromium } from '../helpers/chromium.ts';
import { cliIo, freePort, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';
import { until } from '../helpers/webhook-receiver.ts';

/** A relying party's front-channel logout page: the addresses it was loaded at. */
class FrontchannelPage {
  readonly loaded: URL[] = [];
  server: Server | undefined;
  origin = '';

  async start() {
    const port = await freePort();
    this.origin = `http://127.0.0.1:${port}`;
    this.server = createServer((request, response) => {
      this.loaded.push(new URL(request.url ?? '/', this.origin));
      response.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end('<p>signed out</p>');
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('front-channel logout', () => {
  let server: TestServer;
  let rp: FrontchannelPage;

  before(async () => {
    server = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
    rp = new FrontchannelPage();
    await rp.start();
    const { firstParty, confidential } = server.clients;
    const page = `${rp.origin}/frontchannel-logout?app=first`;
    await cli(['clients', 'update', firstParty.id, '--frontchannel-logout-uri', page]);
    await cli(['clients', 'update', firstParty.id, '--frontchannel-logout-session-required']);
    await cli(['clients', 'update', confidential.id, '--frontchannel-logout-uri', 'https://rp.example/fcl']);
    // Registered for it, but never signed in from the sessions below.
    await cli(['clients', 'update', server.clients.es256.id, '--frontchannel-logout-uri', 'https://other.example/fcl']);
  });
  after(async () => {
    await rp?.stop();
    await server?.close();
  });

  async function cli(args: string[]): Promise<string> {
    const { io, lines } = cliIo(server);
    assert.equal(await run(args, io), 0, lines.join('\n'));
    server.store.clearCaches();
    return lines.join('\n');
  }

  async function signIn(browser: BrowserSim, client: TestClient) {
    const issued = await getCode(server, client, { browser, scope: 'openid' });
    return ((await (await exchange(server, issued)).json()) as { id_token: string }).id_token;
  }

  /** RP-initiated logout of `browser`, confirmed: the answer to the confirmation. */
  async function logout(browser: BrowserSim, params: Record<string, string>) {
    const html = await (await browser.request(`/oauth2/logout?${new URLSearchParams(params)}`)).text();
    const form = { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') };
    return browser.request('/logout', { form });
  }

  const frames = (html: string) =>
    [...html.matchAll(/<iframe src="([^"]+)"/g)].map((m) => new URL(unescapeHtml(m[1]!)));

  it('discovery says front-channel logout with iss and sid is supported', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(metadata.frontchannel_logout_supported, true);
    assert.equal(metadata.frontchannel_logout_session_supported, true);
  });

  it('the signed-out page loads each client of the session in an iframe, then goes on', async () => {
    const browser = new BrowserSim(server.issuer);
    const idToken = await signIn(browser, server.clients.firstParty);
    await signIn(browser, server.clients.confidential);
    // The public client has no front-channel logout: nothing for it.
    await signIn(browser, server.clients.public);
    const { sid } = decodeJwt(idToken);
    const c = server.clients.firstParty;
    const answer = await logout(browser, {
      id_token_hint: idToken,
      post_logout_redirect_uri: c.postLogoutRedirectUri,
      state: 'bye',
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    assert.match(answer.headers.getSetCookie().join(), /tessera_session=;/);
    const csp = answer.headers.get('content-security-policy')!;
    assert.ok(csp.startsWith(`${PAGE_CSP}; frame-src `), csp);
    assert.deepEqual(csp.split('; frame-src ')[1]!.split(' ').sort(), [rp.origin, 'https://rp.example'].sort());
    const html = await answer.text();
    const loaded = frames(html).sort((a, b) => a.href.localeCompare(b.href));
    assert.equal(loaded.length, 2);
    const [first, other] = loaded[0]!.origin === rp.origin ? loaded : [loaded[1]!, loaded[0]!];
    // Front-Channel Logout 1.0 §3: iss and sid for the client that requires them, its own query kept.
    assert.equal(first!.pathname, '/frontchannel-logout');
    assert.deepEqual(Object.fromEntries(first!.searchParams), { app: 'first', iss: server.issuer, sid });
    assert.equal(other!.href, 'https://rp.example/fcl');
    assert.match(html, /<iframe [^>]*hidden/);
    assert.match(html, /<script src="\/assets\/frontchannel-logout\.js" defer><\/script>/);
    const next = /<a href="([^"]+)" data-continue>Continue<\/a>/.exec(html);
    assert.equal(unescapeHtml(next![1]!), `${c.postLogoutRedirectUri}?state=bye`);
    const script = await fetch(`${server.issuer}/assets/frontchannel-logout.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type')!, /^text\/javascript/);
  });

  it('with no post_logout_redirect_uri the page loads the iframes and stays', async () => {
    const browser = new BrowserSim(server.issuer);
    await signIn(browser, server.clients.confidential);
    const answer = await logout(browser, {});
    assert.equal(answer.status, 200);
    const html = await answer.text();
    assert.deepEqual(
      frames(html).map((u) => u.href),
      ['https://rp.example/fcl'],
    );
    assert.match(html, /You can close this window\./);
    assert.doesNotMatch(html, /<script/);
  });

  it('a session none of whose clients has a frontchannel_logout_uri ends with the redirect', async () => {
    const browser = new BrowserSim(server.issuer);
    await signIn(browser, server.clients.public);
    const answer = await logout(browser, {});
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), '/logout/done');
  });

  it('clients show, update and refuse frontchannel_logout_uri', async () => {
    const shown = JSON.parse(await cli(['clients', 'show', server.clients.firstParty.id, '--json'])) as Record<
      string,
      unknown
    >;
    assert.equal(shown.frontchannel_logout_uri, `${rp.origin}/frontchannel-logout?app=first`);
    assert.equal(shown.frontchannel_logout_session_required, true);
    const { io, lines } = cliIo(server);
    const id = server.clients.post.id;
    assert.notEqual(await run(['clients', 'update', id, '--frontchannel-logout-uri', 'http://rp.example/f'], io), 0);
    assert.match(lines.join('\n'), /--frontchannel-logout-uri: "http:\/\/rp\.example\/f" must be an https URL/);
    await cli(['clients', 'update', id, '--frontchannel-logout-uri', 'https://rp.example/f']);
    await cli(['clients', 'update', id, '--no-frontchannel-logout-uri']);
    const removed = JSON.parse(await cli(['clients', 'show', id, '--json'])) as Record<string, unknown>;
    assert.equal(removed.frontchannel_logout_uri, null);
  });

  it('a client registering itself sets frontchannel_logout_uri; bad metadata is refused', async () => {
    const register = async (metadata: Record<string, unknown>) => {
      const response = await fetch(`${server.issuer}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'RP', redirect_uris: ['https://rp.example/cb'], ...metadata }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const registered = await register({
      frontchannel_logout_uri: 'https://rp.example/fcl',
      frontchannel_logout_session_required: true,
    });
    assert.equal(registered.status, 201);
    assert.equal(registered.body.frontchannel_logout_uri, 'https://rp.example/fcl');
    assert.equal(registered.body.frontchannel_logout_session_required, true);
    assert.deepEqual(await register({ frontchannel_logout_uri: 'https://rp.example/fcl#x' }), {
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: 'frontchannel_logout_uri must not contain a fragment',
      },
    });
    assert.deepEqual(
      await register({ frontchannel_logout_uri: 'https://rp.example/fcl', frontchannel_logout_session_required: 1 }),
      {
        status: 400,
        body: {
          error: 'invalid_client_metadata',
          error_description: 'frontchannel_logout_session_required must be a boolean',
        },
      },
    );
  });

  it(
    'Chromium loads the client page with iss and sid, then goes on to the client',
    { skip: needsChromium },
    async () => {
      const chrome = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      try {
        const page = await (await chrome.newContext()).newPage();
        const c = server.clients.firstParty;
        const idToken = await chromeSignIn(page);
        rp.loaded.length = 0;
        const query = { id_token_hint: idToken, post_logout_redirect_uri: c.postLogoutRedirectUri, state: 'bye' };
        await page.goto(`${server.issuer}/oauth2/logout?${new URLSearchParams(query)}`);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL(`${c.postLogoutRedirectUri}?state=bye`);
        assert.equal(rp.loaded.length, 1);
        assert.equal(rp.loaded[0]!.searchParams.get('iss'), server.issuer);
        assert.equal(rp.loaded[0]!.searchParams.get('sid'), decodeJwt(idToken).sid);

        // Without a post_logout_redirect_uri the page stays: the frame loaded, and nothing for axe-core to find.
        const again = await chromeSignIn(page);
        rp.loaded.length = 0;
        await page.goto(`${server.issuer}/oauth2/logout`);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByText('You can close this window.').waitFor();
        await until(() => rp.loaded.length === 1, 'the front-channel logout page loaded');
        assert.equal(rp.loaded[0]!.searchParams.get('sid'), decodeJwt(again).sid);
        const axe = await new AxeBuilder({ page })
          .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'])
          .analyze();
        assert.deepEqual(
          axe.violations.map((v) => v.id),
          [],
        );
      } finally {
        await chrome.close();
      }
    },
  );

  /** Signs the first-party client in from Chromium's `page` as the server's user: the ID token. */
  async function chromeSignIn(page: Page): Promise<string> {
    const c = server.clients.firstParty;
    const query = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 's',
    });
    await page.goto(`${server.issuer}/oauth2/authorize?${query}`);
    await page.getByLabel('Username').fill(server.user.username);
    await page.getByLabel('Password').fill(server.user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${c.redirectUri}?**`);
    const code = new URL(page.url()).searchParams.get('code')!;
    const answer = await exchange(server, { code, verifier: null, client: c });
    return ((await answer.json()) as { id_token: string }).id_token;
  }
});
