// Pushed authorization requests (RFC 9126): openid-client's buildAuthorizationUrlWithPAR with a
// client secret and oauth4webapi's pushedAuthorizationRequest with private_key_jwt, through sign-in
// and consent to tokens; a request_uri used twice, expired, or used by another client is refused;
// a request with bad parameters is refused at the push, before anything is stored; a client that
// must push (--require-pushed-authorization-requests, TESSERA_REQUIRE_PAR) is refused a plain request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
const URN = 'urn:ietf:params:oauth:request_uri:';

async function cli(server: TestServer, ...args: string[]): Promise<Record<string, unknown>> {
  const { lines, io } = cliIo(server);
  assert.equal(await run([...args, '--json'], io), 0, lines.join('\n'));
  server.store.clearCaches();
  return JSON.parse(lines.join('\n')) as Record<string, unknown>;
}

describe('pushed authorization requests', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(() => server.close());

  /** A pushed request of the confidential client, with its secret: the answer. */
  async function push(params: Record<string, string>, clientId = server.clients.confidential.id) {
    const c = server.clients.confidential;
    return fetch(`${server.issuer}/oauth2/par`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${c.secret}`).toString('base64')}` },
      body: new URLSearchParams({ response_type: 'code', redirect_uri: c.redirectUri, scope: 'openid', ...params }),
    });
  }

  it('discovery names the endpoint; pushing is not required by default', () => {
    assert.equal(as.pushed_authorization_request_endpoint, `${server.issuer}/oauth2/par`);
    assert.equal(as.require_pushed_authorization_requests, false);
  });

  it('openid-client: buildAuthorizationUrlWithPAR, sign-in, consent, tokens', async () => {
    const c = server.clients.confidential;
    const config = await client.discovery(
      new URL(server.issuer),
      c.id,
      c.secret!,
      client.ClientSecretBasic(c.secret!),
      { execute: [client.allowInsecureRequests] },
    );
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: c.redirectUri,
      scope: 'openid email',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
    assert.ok(url.searchParams.get('request_uri')!.startsWith(URN));
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    assert.equal(tokens.scope, 'openid email');
    // Used once: the same request_uri again is an error page, never a redirect.
    const again = await new BrowserSim(server.issuer).request(url.href);
    assert.equal(again.status, 400);
    assert.match(await again.text(), /invalid_request_uri/);
  });

  it('oauth4webapi with private_key_jwt: pushed, signed in, tokens', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'par-1' };
    const created = await cli(
      server,
      'clients',
      'create',
      '--name',
      'PAR app',
      '--redirect-uri',
      'http://127.0.0.1/par-cb',
      '--scope',
      'openid profile',
      '--auth-method',
      'private_key_jwt',
      '--jwks',
      JSON.stringify({ keys: [jwk] }),
      '--require-pushed-authorization-requests',
    );
    assert.equal(created.require_pushed_authorization_requests, true);
    const c: oauth.Client = { client_id: created.client_id as string };
    const auth = oauth.PrivateKeyJwt({ key: privateKey, kid: 'par-1' });
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = {
      redirect_uri: 'http://127.0.0.1/par-cb',
      response_type: 'code',
      scope: 'openid profile',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const response = await oauth.pushedAuthorizationRequest(as, c, auth, params, insecure);
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const pushed = await oauth.processPushedAuthorizationResponse(as, c, response);
    assert.equal(pushed.expires_in, 60);
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: c.client_id, request_uri: pushed.request_uri }).toString();
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const code = oauth.validateAuthResponse(as, c, callback, state);
    const grant = await oauth.authorizationCodeGrantRequest(as, c, auth, code, params.redirect_uri, verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, grant);
    assert.equal(tokens.scope, 'openid profile');

    // The same client sending a plain request: invalid_request, back to its redirect URI.
    url.search = new URLSearchParams({ ...params, client_id: c.client_id }).toString();
    const plain = await new BrowserSim(server.issuer).request(url.href);
    assert.equal(plain.status, 302);
    const location = new URL(plain.headers.get('location')!);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('state'), state);
  });

  it('a request_uri expires, and is only for the client that pushed it', async () => {
    const { request_uri } = (await (await push({ state: 's' })).json()) as { request_uri: string };
    const other = server.clients.firstParty.id;
    const elsewhere = new BrowserSim(server.issuer);
    const stolen = await elsewhere.request(
      `/oauth2/authorize?client_id=${other}&request_uri=${encodeURIComponent(request_uri)}`,
    );
    assert.equal(stolen.status, 400);
    const late = (await (await push({ state: 's' })).json()) as { request_uri: string };
    server.clock.offset += 61;
    try {
      const id = server.clients.confidential.id;
      const expired = await elsewhere.request(
        `/oauth2/authorize?client_id=${id}&request_uri=${encodeURIComponent(late.request_uri)}`,
      );
      assert.equal(expired.status, 400);
      assert.match(await expired.text(), /invalid_request_uri/);
    } finally {
      server.clock.offset -= 61;
    }
    // Another request_uri than a pushed one's: not supported, told to the client.
    const c = server.clients.confidential;
    const by = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      request_uri: 'https://app.example/r',
    });
    const foreign = await elsewhere.request(`/oauth2/authorize?${by}`);
    assert.equal(new URL(foreign.headers.get('location')!).searchParams.get('error'), 'request_uri_not_supported');
  });

  it('a client that registers itself may require pushed requests of itself', async () => {
    const response = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['https://agent.example/cb'],
        require_pushed_authorization_requests: true,
      }),
    });
    const registered = (await response.json()) as Record<string, unknown>;
    assert.equal(registered.require_pushed_authorization_requests, true);
    const plain = new URLSearchParams({
      client_id: registered.client_id as string,
      redirect_uri: 'https://agent.example/cb',
      response_type: 'code',
      scope: 'openid',
    });
    // Refused on a page: a client that registered itself is not redirected to unasked (trust.ts).
    const answer = await new BrowserSim(server.issuer).request(`/oauth2/authorize?${plain}`);
    assert.equal(answer.status, 400);
    assert.match(await answer.text(), /must push its authorization requests/);
  });

  it('bad parameters, a wrong secret or a pushed request_uri are refused at the push, nothing stored', async () => {
    const db = await server.db();
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('pushed_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ scope: 'openid nonsense' }, 400, 'invalid_scope'],
      [{ redirect_uri: 'https://evil.example/cb' }, 400, 'invalid_request'],
      [{ response_type: 'token' }, 400, 'unsupported_response_type'],
      [{ code_challenge: 'x', code_challenge_method: 'plain' }, 400, 'invalid_request'],
      [{ request_uri: `${URN}abc` }, 400, 'invalid_request'],
    ];
    for (const [params, status, error] of cases) {
      const response = await push(params);
      assert.equal(response.status, status, JSON.stringify(params));
      assert.equal(((await response.json()) as { error: string }).error, error);
    }
    const wrong = await fetch(`${server.issuer}/oauth2/par`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${server.clients.confidential.id}:nope`).toString('base64')}` },
      body: new URLSearchParams({ response_type: 'code', scope: 'openid' }),
    });
    assert.equal(wrong.status, 401);
    assert.equal(await count(), before);
  });
});

describe('TESSERA_REQUIRE_PAR', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_REQUIRE_PAR: 'true' } });
  });
  after(() => server.close());

  it('every client must push: a plain request is invalid_request; a pushed one goes through', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(metadata.require_pushed_authorization_requests, true);
    const c = server.clients.confidential;
    const config = await client.discovery(
      new URL(server.issuer),
      c.id,
      c.secret!,
      client.ClientSecretBasic(c.secret!),
      { execute: [client.allowInsecureRequests] },
    );
    const params = { redirect_uri: c.redirectUri, scope: 'openid', state: 'st' };
    const plain = await new BrowserSim(server.issuer).request(client.buildAuthorizationUrl(config, params).href);
    assert.equal(new URL(plain.headers.get('location')!).searchParams.get('error'), 'invalid_request');
    const callback = await new BrowserSim(server.issuer).authorize(
      (await client.buildAuthorizationUrlWithPAR(config, params)).href,
      server.user,
    );
    assert.ok(callback.searchParams.get('code'));
  });
});
