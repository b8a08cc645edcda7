// Clients registering themselves: RFC 7591 dynamic client registration and RFC 7592 management, in
// each TESSERA_REGISTRATION mode, with openid-client's registration as one real client of it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
type Json = Record<string, any>;

async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown; contentType?: string } = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body !== undefined ? { 'content-type': init.contentType ?? 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers };
}

/** An access token of alice's for the default audience with `scope`. */
async function userToken(server: TestServer, scope: string): Promise<string> {
  const issued = await getCode(server, server.clients.firstParty, { scope });
  return ((await (await exchange(server, issued)).json()) as Json).access_token;
}

const WEB_APP = { client_name: 'Self-registered app', redirect_uris: ['https://app.example/cb'] };

describe('dynamic client registration (RFC 7591, RFC 7592), for users with the apps scope', () => {
  let server: TestServer;
  let appsToken: string;
  before(async () => {
    server = await startServer();
    appsToken = await userToken(server, 'openid apps');
  });
  after(() => server?.close());
  const endpoint = () => `${server.issuer}/oauth2/register`;

  it('is advertised, with client ID metadata documents', async () => {
    const metadata = (await call(`${server.issuer}/.well-known/oauth-authorization-server`)).body;
    assert.equal(metadata.registration_endpoint, endpoint());
    assert.equal(metadata.client_id_metadata_document_supported, true);
  });

  it('needs a user access token with the apps scope', async () => {
    const none = await call(endpoint(), { body: WEB_APP });
    assert.equal(none.status, 401);
    assert.equal(none.body.error, 'invalid_token');
    assert.match(none.headers.get('www-authenticate')!, /^Bearer /);
    const bogus = await call(endpoint(), { body: WEB_APP, token: 'not-a-token' });
    assert.equal(bogus.status, 401);
    const narrow = await call(endpoint(), { body: WEB_APP, token: await userToken(server, 'openid profile') });
    assert.equal(narrow.status, 403);
    assert.equal(narrow.body.error, 'insufficient_scope');
  });

  it('registers a confidential client that works like any other, owned by the user', async () => {
    const { status, body, headers } = await call(endpoint(), {
      token: appsToken,
      body: { ...WEB_APP, scope: 'openid profile', contacts: ['dev@app.example'], client_uri: 'https://app.example/' },
    });
    assert.equal(status, 201, JSON.stringify(body));
    assert.equal(headers.get('cache-control'), 'no-store');
    assert.equal(body.client_name, 'Self-registered app');
    assert.deepEqual(body.redirect_uris, ['https://app.example/cb']);
    assert.deepEqual(body.grant_types, ['authorization_code']);
    assert.deepEqual(body.response_types, ['code']);
    assert.equal(body.token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(body.scope, 'openid profile');
    assert.deepEqual(body.contacts, ['dev@app.example']);
    assert.equal(body.client_uri, 'https://app.example/');
    assert.equal(typeof body.client_secret, 'string');
    assert.equal(body.client_secret_expires_at, 0);
    assert.equal(typeof body.client_id_issued_at, 'number');
    assert.equal(body.registration_client_uri, `${endpoint()}/${body.client_id}`);
    assert.equal(typeof body.registration_access_token, 'string');

    const stored = await server.store.getClient(body.client_id);
    assert.equal(stored?.ownerId, server.user.id);
    assert.equal(stored?.registeredVia, 'dynamic');
    assert.notEqual(stored?.registrationTokenHash, body.registration_access_token, 'stored hashed');
    // The CLI sees it; the audit trail recorded it.
    const { io, lines } = cliIo(server);
    assert.equal(await run(['clients', 'show', body.client_id, '--json'], io), 0);
    assert.equal(JSON.parse(lines.join('\n')).client_name, 'Self-registered app');
    const events = await server.store.listEvents({ type: 'client.registered' });
    assert.ok(events.some((e) => e.clientId === body.client_id && e.userId === server.user.id));
  });

  it('a registered client signs users in, and the consent page says nobody reviewed it', async () => {
    const registered = await call(endpoint(), {
      token: appsToken,
      body: {
        client_name: 'Unreviewed',
        redirect_uris: [`${server.issuer}/cb/registered`],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      },
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    assert.equal(registered.body.client_secret, undefined, 'a public client has no secret');
    const client: TestClient = {
      id: registered.body.client_id,
      secret: null,
      redirectUri: `${server.issuer}/cb/registered`,
      postLogoutRedirectUri: '',
    };
    const browser = new BrowserSim(server.issuer);
    const query = new URLSearchParams({
      client_id: client.id,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    let response = await browser.request(`/oauth2/authorize?${query}`);
    response = await browser.login(response.headers.get('location')!, server.user.username, server.user.password);
    const page = await (await browser.request(response.headers.get('location')!)).text();
    assert.match(page, /Unreviewed registered itself: the operator of this service has not\s+reviewed it/);
    assert.match(page, /You will return to <strong>127\.0\.0\.1:\d+<\/strong>/);

    const issued = await getCode(server, client, { scope: 'openid', browser });
    const tokens = (await (await exchange(server, issued)).json()) as Json;
    assert.ok(tokens.access_token && tokens.refresh_token && tokens.id_token);
  });

  it('refuses redirect URIs and metadata RFC 7591 §2 rules out, with its error codes', async () => {
    const refused = async (metadata: Json, error: string) => {
      const { status, body } = await call(endpoint(), { token: appsToken, body: metadata });
      assert.equal(status, 400, JSON.stringify(metadata));
      assert.equal(body.error, error, `${JSON.stringify(metadata)}: ${body.error_description}`);
      assert.doesNotMatch(body.error_description, /evil|app\.example/, 'the description names no value sent');
    };
    for (const uri of [
      'https://app.example/cb#evil',
      'http://app.example/cb',
      'https://user:pass@app.example/cb',
      'javascript:alert(1)//evil',
      'data:text/html,evil',
      'vbscript:evil',
      'file:///evil',
      'blob:https://app.example/evil',
      'customscheme:/evil',
      'evil',
      // What a URL parser would drop or reinterpret, and what a header cannot carry.
      'https://app.example/cb\r\nSet-Cookie: evil=1',
      'https://app.example/c b',
      'https://app.example\\@evil.example/cb',
      'https://app.example/caf\u00e9',
      'https://app.example/\tcb',
    ]) {
      await refused({ redirect_uris: [uri] }, 'invalid_redirect_uri');
    }
    await refused({}, 'invalid_redirect_uri');
    await refused(
      { post_logout_redirect_uris: ['http://app.example/bye'], redirect_uris: ['https://a.example/cb'] },
      'invalid_redirect_uri',
    );
    const ok = { redirect_uris: ['https://a.example/cb'] };
    await refused({ ...ok, grant_types: ['implicit'] }, 'invalid_client_metadata');
    await refused({ ...ok, response_types: ['token'] }, 'invalid_client_metadata');
    await refused({ ...ok, grant_types: ['client_credentials'], response_types: ['code'] }, 'invalid_client_metadata');
    await refused({ ...ok, grant_types: ['refresh_token'] }, 'invalid_client_metadata');
    await refused({ ...ok, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata');
    await refused(
      { ...ok, grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' },
      'invalid_client_metadata',
    );
    // What registers itself gets a user's sign-in and its refresh, and the policy's scopes: no more.
    await refused({ grant_types: ['client_credentials'], scope: 'apps' }, 'invalid_client_metadata');
    await refused({ ...ok, scope: 'openid apps' }, 'invalid_client_metadata');
    await refused({ ...ok, scope: 'openid admin' }, 'invalid_client_metadata');
    await refused({ ...ok, client_name: 42 }, 'invalid_client_metadata');
    await refused({ ...ok, client_name: 'bad\u202ename' }, 'invalid_client_metadata');
    await refused({ ...ok, contacts: ['not an address'] }, 'invalid_client_metadata');
    await refused({ ...ok, logo_uri: 'http://app.example/logo.png' }, 'invalid_client_metadata');
    await refused({ ...ok, id_token_signed_response_alg: 'none' }, 'invalid_client_metadata');
    await refused([ok], 'invalid_client_metadata');
    const form = await call(endpoint(), {
      token: appsToken,
      body: 'redirect_uris=x',
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.equal(form.body.error, 'invalid_client_metadata');
    // What it accepts: loopback http, private-use schemes, a refresh token with the code.
    for (const accepted of [
      { redirect_uris: ['http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'http://localhost/cb'] },
      { redirect_uris: ['com.example.app:/oauth2redirect'] },
      { ...ok, grant_types: ['authorization_code', 'refresh_token'] },
    ]) {
      const { status, body } = await call(endpoint(), { token: appsToken, body: accepted });
      assert.equal(status, 201, `${JSON.stringify(accepted)}: ${JSON.stringify(body)}`);
    }
    // Scheme and host are kept in lowercase (RFC 3986 §6.2.2.1), the path as sent; a request that
    // writes them otherwise still matches.
    const cased = await call(endpoint(), {
      token: appsToken,
      body: { redirect_uris: ['HTTPS://App.EXAMPLE/Cb'], token_endpoint_auth_method: 'none' },
    });
    assert.deepEqual(cased.body.redirect_uris, ['https://app.example/Cb']);
    const query = (redirectUri: string) =>
      new URLSearchParams({
        client_id: cased.body.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
    for (const [uri, status] of [
      ['HTTPS://App.EXAMPLE/Cb', 302],
      ['https://app.example/Cb', 302],
      ['https://app.example/cb', 400],
    ] as const) {
      const response = await fetch(`${server.issuer}/oauth2/authorize?${query(uri)}`, { redirect: 'manual' });
      assert.equal(response.status, status, uri);
    }
  });

  it('refuses an IP address for a host but loopback over http, and `*` anywhere, with RFC 7591 §3.2.2 bodies', async () => {
    const numeric =
      'redirect_uris[0] must not have an IP address for its host but loopback over http (http://127.0.0.1, http://[::1])';
    const wildcard = 'redirect_uris[0] must not contain *: a redirect URI is matched exactly, never as a pattern';
    for (const [uri, description] of [
      ['https://10.0.0.1/cb', numeric],
      ['https://203.0.113.7:8443/cb', numeric],
      // What a URL parser reads as an IPv4 address: decimal, hexadecimal, octal, short forms, a final dot.
      ['https://2130706433/cb', numeric],
      ['https://0x7f000001/cb', numeric],
      ['https://0x7f.1/cb', numeric],
      ['https://017700000001/cb', numeric],
      ['https://10.1/cb', numeric],
      ['https://10.0.0.1./cb', numeric],
      ['https://[2001:db8::1]/cb', numeric],
      ['https://[::ffff:10.0.0.1]/cb', numeric],
      // Loopback only as RFC 8252 §7.3 has it: http, written 127.0.0.1 or [::1].
      ['https://127.0.0.1/cb', numeric],
      ['https://[::1]/cb', numeric],
      ['http://127.0.0.2/cb', numeric],
      ['http://2130706433/cb', numeric],
      ['http://[0:0:0:0:0:0:0:1]/cb', numeric],
      ['https://*.app.example/cb', wildcard],
      ['https://app.example/*', wildcard],
      ['https://app.example/cb?next=*', wildcard],
      ['com.example.app:/*', wildcard],
    ]) {
      const { status, body, headers } = await call(endpoint(), { token: appsToken, body: { redirect_uris: [uri] } });
      assert.equal(status, 400, uri);
      assert.deepEqual(body, { error: 'invalid_redirect_uri', error_description: description }, uri);
      assert.equal(headers.get('cache-control'), 'no-store');
    }
    const logout = await call(endpoint(), {
      token: appsToken,
      body: { redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: ['https://192.168.1.1/bye'] },
    });
    assert.deepEqual(logout.body, {
      error: 'invalid_redirect_uri',
      error_description: numeric.replace('redirect_uris[0]', 'post_logout_redirect_uris[0]'),
    });
    // A native app's loopback, a name, and an escaped star are what they were.
    for (const uri of [
      'http://127.0.0.1/cb',
      'http://[::1]:8080/cb',
      'http://localhost/cb',
      'https://app.example/%2A',
    ]) {
      const { status, body } = await call(endpoint(), { token: appsToken, body: { redirect_uris: [uri] } });
      assert.equal(status, 201, `${uri}: ${JSON.stringify(body)}`);
    }
  });

  it('reads, replaces and deletes a registration with its registration access token (RFC 7592)', async () => {
    const created = (await call(endpoint(), { token: appsToken, body: { ...WEB_APP, scope: 'openid profile' } })).body;
    const uri = created.registration_client_uri as string;
    const first = created.registration_access_token as string;
    assert.equal((await call(uri)).status, 401);
    assert.equal((await call(uri, { token: 'wrong' })).status, 401);
    assert.equal((await call(`${endpoint()}/${server.clients.confidential.id}`, { token: first })).status, 401);

    const read = await call(uri, { token: first });
    assert.equal(read.status, 200);
    assert.equal(read.body.client_id, created.client_id);
    assert.equal(read.body.client_secret, undefined, 'the secret is shown once');
    const second = read.body.registration_access_token as string;
    assert.notEqual(second, first, 'every answer carries a new registration access token');
    assert.equal((await call(uri, { token: first })).status, 401, 'the old one no longer works');

    const replaced = await call(uri, {
      method: 'PUT',
      token: second,
      body: { client_id: created.client_id, client_name: 'Renamed', redirect_uris: ['https://app.example/new'] },
    });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.client_name, 'Renamed');
    assert.deepEqual(replaced.body.redirect_uris, ['https://app.example/new']);
    assert.equal(replaced.body.scope, 'openid profile', "an omitted scope keeps the client's");
    assert.equal((await server.store.getClient(created.client_id))?.name, 'Renamed');
    let third = replaced.body.registration_access_token as string;
    // An update keeps or narrows, never widens: not past what the client has, though within the policy.
    const widened = await call(uri, {
      method: 'PUT',
      token: third,
      body: { client_id: created.client_id, redirect_uris: ['https://app.example/cb'], scope: 'openid email' },
    });
    assert.equal(widened.body.error, 'invalid_client_metadata');
    const narrowed = await call(uri, {
      method: 'PUT',
      token: third,
      body: { client_id: created.client_id, redirect_uris: ['https://app.example/new'], scope: 'openid' },
    });
    assert.equal(narrowed.body.scope, 'openid');
    third = narrowed.body.registration_access_token as string;
    for (const [body, why] of [
      [{ client_id: 'another', redirect_uris: ['https://app.example/cb'] }, 'another client_id'],
      [
        { client_id: created.client_id, redirect_uris: ['https://app.example/cb'], client_secret: 'wrong' },
        'wrong secret',
      ],
      [
        { client_id: created.client_id, redirect_uris: ['https://app.example/cb'], registration_access_token: third },
        'token',
      ],
    ] as const) {
      const refused = await call(uri, { method: 'PUT', token: third, body });
      assert.equal(refused.body.error, 'invalid_client_metadata', why);
    }
    const updatedSecret = await call(uri, {
      method: 'PUT',
      token: third,
      body: {
        client_id: created.client_id,
        redirect_uris: ['https://app.example/cb'],
        client_secret: created.client_secret,
      },
    });
    assert.equal(updatedSecret.status, 200);

    const deleted = await fetch(uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${updatedSecret.body.registration_access_token}` },
    });
    assert.equal(deleted.status, 204);
    assert.equal(await server.store.getClient(created.client_id), undefined);
    assert.equal((await call(uri, { token: updatedSecret.body.registration_access_token })).status, 401);
  });

  it('deleting a client ends the tokens issued to it', async () => {
    const created = (
      await call(endpoint(), {
        token: appsToken,
        body: { redirect_uris: [`${server.issuer}/cb/doomed`], grant_types: ['authorization_code', 'refresh_token'] },
      })
    ).body;
    const client: TestClient = {
      id: created.client_id,
      secret: created.client_secret,
      redirectUri: `${server.issuer}/cb/doomed`,
      postLogoutRedirectUri: '',
    };
    const tokens = (await (await exchange(server, await getCode(server, client, { scope: 'openid' }))).json()) as Json;
    const userinfo = () =>
      fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal((await userinfo()).status, 200);
    await fetch(created.registration_client_uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${created.registration_access_token}` },
    });
    assert.equal((await userinfo()).status, 401);
  });

  it('the account page lists the apps the user registered, and removing one deletes it', async () => {
    const created = (await call(endpoint(), { token: appsToken, body: { ...WEB_APP, client_name: 'Listed app' } }))
      .body;
    const browser = new BrowserSim(server.issuer);
    const login = await browser.request('/account/login');
    const loginPage = await login.text();
    await browser.request('/account/login', {
      form: {
        csrf: BrowserSim.hidden(loginPage, 'csrf'),
        username: server.user.username,
        password: server.user.password,
      },
    });
    const page = await (await browser.request('/account')).text();
    assert.match(page, /Apps you registered/);
    assert.match(page, /Listed app/);
    const csrf = BrowserSim.hidden(page, 'csrf');
    // Only its owner's form deletes it: a forged client id of someone else's does nothing.
    await browser.request('/account/apps/delete', { form: { csrf, client_id: server.clients.confidential.id } });
    assert.ok(await server.store.getClient(server.clients.confidential.id));
    const removed = await browser.request('/account/apps/delete', { form: { csrf, client_id: created.client_id } });
    assert.equal(removed.status, 303);
    assert.equal(await server.store.getClient(created.client_id), undefined);
  });

  it("openid-client's dynamic registration registers a client that completes the flow", async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(server.issuer),
      {
        redirect_uris: [`${server.issuer}/cb/oidc-client`],
        client_name: 'openid-client app',
        grant_types: ['authorization_code', 'refresh_token'],
        // openid-client authenticates a registered client with client_secret_post unless told otherwise.
        token_endpoint_auth_method: 'client_secret_post',
      },
      undefined,
      { initialAccessToken: appsToken, execute: [oidc.allowInsecureRequests] },
    );
    const metadata = config.clientMetadata();
    assert.equal(metadata.client_name, 'openid-client app');
    const client: TestClient = {
      id: metadata.client_id,
      secret: metadata.client_secret as string,
      redirectUri: `${server.issuer}/cb/oidc-client`,
      postLogoutRedirectUri: '',
    };
    const issued = await getCode(server, client, { scope: 'openid profile' });
    const callback = new URL(
      `${client.redirectUri}?code=${encodeURIComponent(issued.code)}&state=s&iss=${encodeURIComponent(server.issuer)}`,
    );
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: 's' });
    assert.equal(tokens.claims()?.sub, server.user.id);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    assert.ok(refreshed.access_token);
  });
});

describe('open registration (TESSERA_REGISTRATION=open), limited per address', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      env: {
        TESSERA_REGISTRATION: 'open',
        TESSERA_REGISTRATION_LIMIT: '2',
        TESSERA_REGISTRATION_SCOPES: 'openid apps',
      },
    });
  });
  after(() => server?.close());

  it('anyone registers, within the scopes the policy allows, until the address has registered its share', async () => {
    const endpoint = `${server.issuer}/oauth2/register`;
    const first = await call(endpoint, { body: { ...WEB_APP, token_endpoint_auth_method: 'none' } });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.scope, 'openid apps', "no scope asked: the policy's");
    assert.equal((await server.store.getClient(first.body.client_id))?.ownerId, null);
    const wider = await call(endpoint, { body: { ...WEB_APP, scope: 'openid profile' } });
    assert.equal(
      wider.body.error,
      'invalid_client_metadata',
      'a registration cannot grant itself more than the policy',
    );
    assert.equal((await call(endpoint, { body: WEB_APP })).status, 201);
    const third = await call(endpoint, { body: WEB_APP });
    assert.equal(third.status, 429);
    assert.equal(third.body.error, 'temporarily_unavailable');
    assert.ok(Number(third.headers.get('retry-after')) > 3500);
    // A preflight from any origin: browser apps and agents register too.
    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  });
});

describe('registration turned off', () => {
  it('answers 404 and is not advertised', async () => {
    const server = await startServer({ env: { TESSERA_REGISTRATION: 'off' } });
    try {
      const metadata = (await call(`${server.issuer}/.well-known/openid-configuration`)).body;
      assert.equal(metadata.registration_endpoint, undefined);
      assert.equal((await call(`${server.issuer}/oauth2/register`, { body: WEB_APP })).status, 404);
    } finally {
      await server.close();
    }
  });
});

void tokenRequest;
void basic;
