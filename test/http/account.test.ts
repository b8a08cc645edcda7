// The account page: the applications a user has granted access to, and withdrawing one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

describe('account page: granted applications', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  async function introspect(token: string): Promise<boolean> {
    const c = server.clients.es256;
    const response = await fetch(`${server.issuer}/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
      body: new URLSearchParams({ token }),
    });
    return ((await response.json()) as { active: boolean }).active;
  }

  it('asks for a login, lists the applications with their scopes, and withdraws one', async () => {
    const c = server.clients.confidential;
    const tokens = (await (await exchange(server, await getCode(server, c, { scope: 'openid apps' }))).json()) as {
      access_token: string;
      refresh_token: string;
    };
    const second = (await (await exchange(server, await getCode(server, c, { scope: 'openid webhooks' }))).json()) as {
      refresh_token: string;
    };
    await exchange(server, await getCode(server, server.clients.es256, { scope: 'openid' }));

    const browser = new BrowserSim(server.issuer);
    const first = await browser.request('/account');
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), '/account/login');
    const loginPage = await (await browser.request('/account/login')).text();
    assert.match(loginPage, /action="\/account\/login"/);
    const wrong = await browser.request('/account/login', {
      form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'alice', password: 'nope' },
    });
    assert.equal(wrong.headers.get('location'), '/account/login?error=login_failed');
    const login = await browser.request('/account/login', {
      form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), username: 'alice', password: server.user.password },
    });
    assert.equal(login.status, 303);
    assert.equal(login.headers.get('location'), '/account');

    const page = await (await browser.request('/account')).text();
    assert.match(page, /Test confidential/);
    assert.match(page, /Test es256/);
    assert.match(page, /<code>apps<\/code>/);
    assert.match(page, /<code>webhooks<\/code>/);
    assert.equal(await introspect(tokens.access_token), true);

    // A forged form does nothing.
    assert.equal(
      (await browser.request('/account/withdraw', { form: { csrf: 'forged', client_id: c.id } })).status,
      403,
    );
    assert.equal(await introspect(tokens.refresh_token), false, 'refresh tokens introspect only for their client');

    const withdraw = await browser.request('/account/withdraw', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), client_id: c.id },
    });
    assert.equal(withdraw.status, 303);
    assert.equal(withdraw.headers.get('location'), '/account');
    const after = await (await browser.request('/account')).text();
    assert.doesNotMatch(after, /Test confidential/);
    assert.match(after, /Test es256/);

    assert.equal(await introspect(tokens.access_token), false);
    for (const refreshToken of [tokens.refresh_token, second.refresh_token]) {
      const response = await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        basic(c.id, c.secret!),
      );
      assert.equal(response.status, 400);
    }
    // Consent is forgotten too: the next authorization asks again.
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid apps',
    });
    assert.match((await browser.request(`/oauth2/authorize?${params}`)).headers.get('location')!, /^\/consent\?/);
  });
});
