// OpenID Connect RP-Initiated Logout.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

describe('GET and POST /oauth2/logout', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  async function signedIn(): Promise<{ browser: BrowserSim; idToken: string }> {
    const browser = new BrowserSim(server.issuer);
    const issued = await getCode(server, server.clients.confidential, { browser, scope: 'openid' });
    const { id_token } = (await (await exchange(server, issued)).json()) as { id_token: string };
    return { browser, idToken: id_token };
  }

  function logoutUrl(params: Record<string, string>): string {
    return `/oauth2/logout?${new URLSearchParams(params)}`;
  }

  it('confirm page, then the session ends and the user goes to the registered URI with state', async () => {
    const { browser, idToken } = await signedIn();
    const c = server.clients.confidential;
    const page = await browser.request(
      logoutUrl({ id_token_hint: idToken, post_logout_redirect_uri: c.postLogoutRedirectUri, state: 'bye' }),
    );
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    const html = await page.text();
    assert.match(html, /Sign out\?/);
    assert.match(html, /Test confidential/);
    const done = await browser.request('/logout', {
      form: { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') },
    });
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), `${c.postLogoutRedirectUri}?state=bye`);
    assert.match(done.headers.getSetCookie().join(), /tessera_session=;/);
    // The session is gone: the next authorization asks for a login.
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
    });
    assert.match((await browser.request(`/oauth2/authorize?${params}`)).headers.get('location')!, /^\/login\?/);
  });

  it('POST /oauth2/logout with client_id, and without a redirect the signed-out page', async () => {
    const { browser } = await signedIn();
    const page = await browser.request('/oauth2/logout', { form: { client_id: server.clients.confidential.id } });
    const html = await page.text();
    const done = await browser.request('/logout', {
      form: { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') },
    });
    assert.equal(done.headers.get('location'), '/logout/done');
    assert.match(await (await browser.request('/logout/done')).text(), /You are signed out/);
  });

  it('without a session there is nothing to confirm', async () => {
    const c = server.clients.confidential;
    const response = await new BrowserSim(server.issuer).request(
      logoutUrl({ client_id: c.id, post_logout_redirect_uri: c.postLogoutRedirectUri, state: 's' }),
    );
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), `${c.postLogoutRedirectUri}?state=s`);
  });

  it('the confirmation needs the CSRF token; the session survives a forged one', async () => {
    const { browser } = await signedIn();
    const html = await (await browser.request(logoutUrl({}))).text();
    const forged = await browser.request('/logout', {
      form: { logout: BrowserSim.hidden(html, 'logout'), csrf: 'forged' },
    });
    assert.equal(forged.status, 403);
    assert.equal((await browser.request(logoutUrl({}))).status, 200, 'still signed in');
  });

  const invalid: Array<
    [string, (c: TestServer['clients']['confidential'], idToken: string) => Record<string, string>]
  > = [
    [
      'an unregistered post_logout_redirect_uri',
      (c) => ({ client_id: c.id, post_logout_redirect_uri: 'https://evil.example/' }),
    ],
    ['a post_logout_redirect_uri without a client', (c) => ({ post_logout_redirect_uri: c.postLogoutRedirectUri })],
    ['an id_token_hint that is not ours', () => ({ id_token_hint: 'eyJhbGciOiJIUzI1NiJ9.e30.x' })],
    [
      'a client_id that does not match the id_token_hint',
      (_c, idToken) => ({ id_token_hint: idToken, client_id: server.clients.es256.id }),
    ],
    ['an unknown client_id', () => ({ client_id: 'nope' })],
  ];
  for (const [name, params] of invalid) {
    it(`${name} → an error page, never a redirect`, async () => {
      const { browser, idToken } = await signedIn();
      const response = await browser.request(logoutUrl(params(server.clients.confidential, idToken)));
      assert.equal(response.status, 400);
      assert.equal(response.headers.get('location'), null);
      assert.match(await response.text(), /invalid_request/);
    });
  }

  it('an expired ID token still serves as the hint', async () => {
    const { browser, idToken } = await signedIn();
    server.clock.offset += 7200;
    try {
      assert.equal((await browser.request(logoutUrl({ id_token_hint: idToken }))).status, 200);
    } finally {
      server.clock.offset -= 7200;
    }
  });
});
