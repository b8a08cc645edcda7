// The authorization endpoint's rules: error pages before the redirect URI is trusted, error
// redirects with state and iss after, prompt / max_age / consent behaviour, page security.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const CHALLENGE = createHash('sha256').update('v'.repeat(43)).digest('base64url');

describe('GET /oauth2/authorize', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  function url(params: Record<string, string | string[]>): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      for (const v of Array.isArray(value) ? value : [value]) search.append(key, v);
    }
    return `${server.issuer}/oauth2/authorize?${search}`;
  }

  function base(
    extra: Record<string, string | string[]> = {},
    client = server.clients.confidential,
  ): Record<string, string | string[]> {
    return {
      client_id: client.id,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 'xyz',
      ...extra,
    };
  }

  async function get(params: Record<string, string | string[]>, browser?: BrowserSim): Promise<Response> {
    return browser ? browser.request(url(params)) : fetch(url(params), { redirect: 'manual' });
  }

  describe('errors shown as a page, never redirected', () => {
    const cases: Array<[string, () => Record<string, string | string[]>]> = [
      ['unknown client_id', () => base({ client_id: 'nope' })],
      [
        'missing client_id',
        () => {
          const p = base();
          delete p.client_id;
          return p;
        },
      ],
      ['unregistered redirect_uri', () => base({ redirect_uri: 'https://evil.example/cb' })],
      [
        'redirect_uri differing only by a trailing slash',
        () => base({ redirect_uri: `${server.clients.confidential.redirectUri}/` }),
      ],
      [
        'missing redirect_uri',
        () => {
          const p = base();
          delete p.redirect_uri;
          return p;
        },
      ],
      [
        'repeated client_id',
        () => base({ client_id: [server.clients.confidential.id, server.clients.confidential.id] }),
      ],
    ];
    for (const [name, params] of cases) {
      it(name, async () => {
        const response = await get(params());
        assert.equal(response.status, 400);
        assert.equal(response.headers.get('location'), null);
        assert.match(response.headers.get('content-type')!, /^text\/html/);
        assert.match(response.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
        assert.match(await response.text(), /invalid_(request|client)/);
      });
    }
  });

  describe('errors redirected to the client with error, state and iss', () => {
    const cases: Array<[string, () => Record<string, string | string[]>, string]> = [
      ['response_type=token', () => base({ response_type: 'token' }), 'unsupported_response_type'],
      [
        'missing response_type',
        () => {
          const p = base();
          delete p.response_type;
          return p;
        },
        'invalid_request',
      ],
      [
        'scope not registered for the client',
        () => base({ scope: 'openid apps' }, server.clients.narrow),
        'invalid_scope',
      ],
      ['unknown scope', () => base({ scope: 'openid admin' }), 'invalid_scope'],
      [
        'missing scope',
        () => {
          const p = base();
          delete p.scope;
          return p;
        },
        'invalid_request',
      ],
      [
        'code_challenge_method=plain',
        () => base({ code_challenge: CHALLENGE, code_challenge_method: 'plain' }),
        'invalid_request',
      ],
      [
        'code_challenge without method (plain by default)',
        () => base({ code_challenge: CHALLENGE }),
        'invalid_request',
      ],
      ['code_challenge_method without challenge', () => base({ code_challenge_method: 'S256' }), 'invalid_request'],
      [
        'code_challenge of 42 characters',
        () => base({ code_challenge: 'a'.repeat(42), code_challenge_method: 'S256' }),
        'invalid_request',
      ],
      [
        'code_challenge of 129 characters',
        () => base({ code_challenge: 'a'.repeat(129), code_challenge_method: 'S256' }),
        'invalid_request',
      ],
      ['public client without PKCE', () => base({}, server.clients.public), 'invalid_request'],
      ['repeated scope parameter', () => base({ scope: ['openid', 'openid'] }), 'invalid_request'],
      ['request_uri', () => base({ request_uri: 'https://app.example/req' }), 'request_uri_not_supported'],
      ['prompt=none combined with login', () => base({ prompt: 'none login' }), 'invalid_request'],
      ['unknown prompt value', () => base({ prompt: 'bogus' }), 'invalid_request'],
      ['negative max_age', () => base({ max_age: '-1' }), 'invalid_request'],
      ['prompt=none without a session', () => base({ prompt: 'none' }), 'login_required'],
    ];
    for (const [name, params, error] of cases) {
      it(`${name} → ${error}`, async () => {
        const response = await get(params());
        assert.equal(response.status, 302);
        const location = new URL(response.headers.get('location')!);
        assert.equal(
          location.origin + location.pathname,
          server.clients.confidential.redirectUri.replace('confidential', location.pathname.split('/').at(-1)!),
        );
        assert.equal(location.searchParams.get('error'), error);
        assert.ok(location.searchParams.get('error_description'));
        assert.equal(location.searchParams.get('state'), 'xyz');
        assert.equal(location.searchParams.get('iss'), server.issuer);
        assert.equal(location.searchParams.get('code'), null);
      });
    }
  });

  it('a request object that is not a JWT: invalid_request_object, on the error page (never redirected)', async () => {
    const response = await get(base({ request: 'eyJ.eyJ.x' }));
    assert.equal(response.status, 400);
    assert.match(await response.text(), /invalid_request_object/);
  });

  it('ignores unknown parameters and the OIDC hints that need no support', async () => {
    const response = await get(
      base({
        foo: 'bar',
        display: 'popup',
        ui_locales: 'de',
        claims_locales: 'de',
        login_hint: 'alice',
        acr_values: 'urn:x',
        id_token_hint: 'abc',
      }),
    );
    assert.equal(response.status, 302);
    assert.match(response.headers.get('location')!, /^\/login\?interaction=/);
  });

  it('POST /oauth2/authorize works like GET and answers 303', async () => {
    const response = await fetch(`${server.issuer}/oauth2/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(base() as Record<string, string>),
      redirect: 'manual',
    });
    assert.equal(response.status, 303);
    assert.match(response.headers.get('location')!, /^\/login\?interaction=/);
  });

  describe('login and consent', () => {
    it('the login page is secure: CSP, labelled inputs, CSRF field, HttpOnly SameSite=Lax cookie', async () => {
      const browser = new BrowserSim(server.issuer);
      const first = await get(base(), browser);
      const page = await browser.request(first.headers.get('location')!);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      const html = await page.text();
      assert.match(html, /<label for="username">/);
      assert.match(html, /<label for="password">/);
      assert.match(html, /name="csrf" value="[^"]+"/);
      assert.match(html, /Test confidential/);
      const cookie = page.headers.getSetCookie().find((c) => c.startsWith('tessera_csrf='))!;
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
    });

    it('a failed login says so without telling which field was wrong', async () => {
      for (const [username, password] of [
        ['alice', 'wrong password'],
        ['nobody', server.user.password],
      ] as const) {
        const browser = new BrowserSim(server.issuer);
        const first = await get(base(), browser);
        const response = await browser.login(first.headers.get('location')!, username, password);
        assert.equal(response.status, 303);
        const location = response.headers.get('location')!;
        assert.match(location, /^\/login\?.*error=login_failed/);
        assert.equal(browser.cookies.has('tessera_session'), false);
        const page = await (await browser.request(location)).text();
        assert.match(page, /role="alert">Incorrect username or password\.</);
      }
    });

    it('a login form without the CSRF token is refused with 403', async () => {
      const browser = new BrowserSim(server.issuer);
      const first = await get(base(), browser);
      const page = await (await browser.request(first.headers.get('location')!)).text();
      const response = await browser.request('/login', {
        form: {
          interaction: BrowserSim.hidden(page, 'interaction'),
          csrf: 'forged',
          username: 'alice',
          password: server.user.password,
        },
      });
      assert.equal(response.status, 403);
      assert.equal(browser.cookies.has('tessera_session'), false);
    });

    it('a tampered interaction is refused', async () => {
      const browser = new BrowserSim(server.issuer);
      const response = await browser.request('/login?interaction=eyJyZXF1ZXN0Ijp7fX0.forged');
      assert.equal(response.status, 400);
    });

    it('deny → access_denied with state and iss', async () => {
      const callback = await new BrowserSim(server.issuer).authorize(url(base()), server.user, 'deny');
      assert.equal(callback.searchParams.get('error'), 'access_denied');
      assert.equal(callback.searchParams.get('state'), 'xyz');
      assert.equal(callback.searchParams.get('iss'), server.issuer);
    });

    it('consent is remembered; more scopes ask for the new ones only; prompt=consent asks again; prompt=none', async () => {
      const browser = new BrowserSim(server.issuer);
      const c = server.clients.es256;
      const first = await browser.authorize(url(base({ scope: 'openid profile' }, c)), server.user);
      assert.ok(first.searchParams.get('code'));

      // Remembered: straight back to the client.
      const again = await get(base({ scope: 'openid profile' }, c), browser);
      assert.equal(again.status, 302);
      const location = new URL(again.headers.get('location')!);
      assert.equal(location.origin + location.pathname, c.redirectUri);
      assert.ok(location.searchParams.get('code'));
      assert.equal(location.searchParams.get('iss'), server.issuer);

      // prompt=none works with a session and consent.
      const silent = new URL(
        (await get(base({ scope: 'openid profile', prompt: 'none' }, c), browser)).headers.get('location')!,
      );
      assert.ok(silent.searchParams.get('code'));

      // More scopes: prompt=none → consent_required; otherwise the page lists only the new scope.
      const none = new URL(
        (await get(base({ scope: 'openid profile apps', prompt: 'none' }, c), browser)).headers.get('location')!,
      );
      assert.equal(none.searchParams.get('error'), 'consent_required');
      assert.equal(none.searchParams.get('state'), 'xyz');
      const more = await get(base({ scope: 'openid profile apps' }, c), browser);
      assert.match(more.headers.get('location')!, /^\/consent\?/);
      const page = await (await browser.request(more.headers.get('location')!)).text();
      assert.match(page, /<code>apps<\/code>/);
      assert.doesNotMatch(page, /<code>profile<\/code>/);

      // prompt=consent forces the page even for remembered scopes.
      const forced = await get(base({ scope: 'openid profile', prompt: 'consent' }, c), browser);
      assert.match(forced.headers.get('location')!, /^\/consent\?/);
    });

    it('prompt=login and max_age force a new login despite a session; auth_time moves on', async () => {
      const browser = new BrowserSim(server.issuer);
      const c = server.clients.firstParty;
      const callback = await browser.authorize(url(base({}, c)), server.user);
      assert.ok(callback.searchParams.get('code'), 'first-party clients skip consent');
      const firstSession = browser.cookies.get('tessera_session');

      assert.match((await get(base({}, c), browser)).headers.get('location')!, /[?&]code=/);
      assert.match((await get(base({ prompt: 'login' }, c), browser)).headers.get('location')!, /^\/login\?/);
      server.clock.offset += 5;
      try {
        assert.match((await get(base({ max_age: '3' }, c), browser)).headers.get('location')!, /^\/login\?/);
        assert.match((await get(base({ max_age: '60' }, c), browser)).headers.get('location')!, /[?&]code=/);
        const relogin = await browser.authorize(url(base({ prompt: 'login' }, c)), server.user);
        assert.ok(relogin.searchParams.get('code'));
        assert.notEqual(browser.cookies.get('tessera_session'), firstSession, 'a new session id after login');
      } finally {
        server.clock.offset -= 5;
      }
    });

    it('a disabled user is asked to log in again and cannot', async () => {
      const browser = new BrowserSim(server.issuer);
      const c = server.clients.firstParty;
      await browser.authorize(url(base({}, c)), server.user);
      const { createUser } = await import('../../src/admin/new-user.ts');
      const { hashPassword } = await import('../../src/authn/password/hash.ts');
      const bob = await createUser(server.store, server.config, {
        username: 'bob',
        email: 'bob@example.com',
        passwordHash: await hashPassword('bob password'),
      });
      const bobBrowser = new BrowserSim(server.issuer);
      await bobBrowser.authorize(url(base({}, c)), { username: 'bob', password: 'bob password' });
      await server.store.setUserDisabled(bob.id, true, Math.floor(Date.now() / 1000));
      assert.match((await get(base({}, c), bobBrowser)).headers.get('location')!, /^\/login\?/);
      const again = await bobBrowser.login(
        (await get(base({}, c), bobBrowser)).headers.get('location')!,
        'bob',
        'bob password',
      );
      assert.match(again.headers.get('location')!, /error=login_failed/);
    });
  });
});
