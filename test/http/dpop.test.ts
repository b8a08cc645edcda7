// DPoP at the token endpoint (RFC 9449 §5): openid-client (ES256, a public client) and oauth4webapi
// (PS256, a confidential one) through sign-in to DPoP-bound tokens and their refresh; a public
// client's refresh with another key or none refused; a replayed or wrong proof refused with
// invalid_dpop_proof; a client that must use DPoP (--require-dpop, dpop_bound_access_tokens) refused
// a plain request; with TESSERA_DPOP_NONCE, the server asks for a nonce and the library retries.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { run } from '../../src/cli/main.ts';
import { createClient } from '../../src/admin/clients.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { dpopKey, dpopProof } from '../helpers/dpop.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

const insecure = { [oauth.allowInsecureRequests]: true };

/** A confidential client for client_credentials, made as the CLI makes it: its id and secret. */
async function machineClient(server: TestServer, requireDpop = false) {
  const made = await createClient(server.store, server.config, {
    name: 'machine',
    redirectUris: [],
    scopes: ['apps'],
    public: false,
    grantTypes: ['client_credentials'],
    requireDpop,
  });
  return { id: made.client.clientId, secret: made.clientSecret! };
}

/** A client_credentials request with `proof` as its DPoP header (none when undefined). */
function clientCredentials(server: TestServer, machine: { id: string; secret: string }, proof?: string) {
  return fetch(`${server.issuer}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: basic(machine.id, machine.secret), ...(proof ? { dpop: proof } : {}) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'apps' }),
  });
}

async function refusal(response: Response, status: number, error: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(((await response.json()) as { error: string }).error, error);
}

/** openid-client, a public client, ES256: a code flow and refreshes bound to the key; another key or none refused. */
async function publicClientBinding(server: TestServer): Promise<void> {
  const c = server.clients.public;
  const config = await client.discovery(new URL(server.issuer), c.id, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
  });
  const keyPair = await client.randomDPoPKeyPair('ES256');
  const DPoP = client.getDPoPHandle(config, keyPair);
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: c.redirectUri,
    scope: 'openid email',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, {
    DPoP,
  });
  assert.equal(tokens.token_type, 'dpop');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
  assert.equal(refreshed.token_type, 'dpop');
  assert.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt });

  // §5: the refresh token is bound to the key: another key, or no proof at all, refreshes nothing.
  const other = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  const invalidGrant = (err: unknown) => (err as { error?: string }).error === 'invalid_grant';
  await assert.rejects(
    client.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: other }),
    invalidGrant,
  );
  await assert.rejects(client.refreshTokenGrant(config, refreshed.refresh_token!), invalidGrant);
  // Those refusals changed nothing: the key's holder refreshes on.
  const again = await client.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP });
  assert.deepEqual(decodeJwt(again.access_token).cnf, { jkt });
}

describe('DPoP at the token endpoint', () => {
  let server: TestServer;
  let tokenUrl: string;
  before(async () => {
    server = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
    tokenUrl = `${server.issuer}/oauth2/token`;
  });
  after(() => server.close());

  it('discovery names the algs of proofs', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as {
      dpop_signing_alg_values_supported: string[];
    };
    for (const alg of ['ES256', 'RS256', 'PS256', 'EdDSA'])
      assert.ok(metadata.dpop_signing_alg_values_supported.includes(alg));
  });

  it('openid-client, public client, ES256: code flow and refresh bound to the key; another key or none refused', () =>
    publicClientBinding(server));

  it('oauth4webapi, confidential client, PS256: code flow, userinfo and refresh with DPoP', async () => {
    const c = server.clients.confidential;
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const oc: oauth.Client = { client_id: c.id };
    const auth = oauth.ClientSecretBasic(c.secret!);
    const keyPair = await oauth.generateKeyPair('PS256');
    const DPoP = oauth.DPoP(oc, keyPair);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid email',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const params = oauth.validateAuthResponse(as, oc, callback);
    const response = await oauth.authorizationCodeGrantRequest(as, oc, auth, params, c.redirectUri, verifier, {
      ...insecure,
      DPoP,
    });
    const tokens = await oauth.processAuthorizationCodeResponse(as, oc, response);
    assert.equal(tokens.token_type, 'dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });

    const info = await oauth.userInfoRequest(as, oc, tokens.access_token, { ...insecure, DPoP });
    const claims = await oauth.processUserInfoResponse(as, oc, server.user.id, info);
    assert.equal(claims.email, 'alice@example.com');

    const refresh = await oauth.refreshTokenGrantRequest(as, oc, auth, tokens.refresh_token!, { ...insecure, DPoP });
    const refreshed = await oauth.processRefreshTokenResponse(as, oc, refresh);
    assert.equal(refreshed.token_type, 'dpop');
    assert.deepEqual(decodeJwt(refreshed.access_token).cnf, { jkt });
    // A confidential client's refresh tokens are bound to its authentication, not to a key (§5).
    const plain = await oauth.refreshTokenGrantRequest(as, oc, auth, refreshed.refresh_token!, insecure);
    const bearer = await oauth.processRefreshTokenResponse(as, oc, plain);
    assert.equal(bearer.token_type, 'bearer');
    assert.equal(decodeJwt(bearer.access_token).cnf, undefined);
  });

  it('dpop_jkt, or a proof at the push, binds the code to the key (§10)', async () => {
    const c = server.clients.public;
    const config = await client.discovery(new URL(server.issuer), c.id, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const other = await dpopKey();
    for (const pushed of [false, true]) {
      const verifier = client.randomPKCECodeVerifier();
      const params = {
        redirect_uri: c.redirectUri,
        scope: 'openid',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      };
      const url = pushed
        ? await client.buildAuthorizationUrlWithPAR(config, params, { DPoP })
        : client.buildAuthorizationUrl(config, { ...params, dpop_jkt: await DPoP.calculateThumbprint() });
      const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
      const form = {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: c.redirectUri,
        code_verifier: verifier,
        client_id: c.id,
      };
      const exchange = (proof?: string) =>
        fetch(tokenUrl, { method: 'POST', headers: proof ? { dpop: proof } : {}, body: new URLSearchParams(form) });
      await refusal(await exchange(await dpopProof(other, 'POST', tokenUrl)), 400, 'invalid_grant');
      await refusal(await exchange(), 400, 'invalid_grant');
      const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, {
        DPoP,
      });
      assert.equal(tokens.token_type, 'dpop');
    }
    const malformed = new URL(`${server.issuer}/oauth2/authorize`);
    malformed.search = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      dpop_jkt: 'short',
    }).toString();
    const answer = await fetch(malformed, { redirect: 'manual' });
    // At the push, a dpop_jkt that is not the proof's key.
    const parUrl = `${server.issuer}/oauth2/par`;
    const mismatched = await fetch(parUrl, {
      method: 'POST',
      headers: { dpop: await dpopProof(other, 'POST', parUrl) },
      body: new URLSearchParams({
        client_id: c.id,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'c'.repeat(43),
        code_challenge_method: 'S256',
        dpop_jkt: await DPoP.calculateThumbprint(),
      }),
    });
    await refusal(mismatched, 400, 'invalid_request');
    assert.match(answer.headers.get('location') ?? '', /error=invalid_request/);
  });

  it('client_credentials with EdDSA; the same proof again is refused (invalid_dpop_proof)', async () => {
    const machine = await machineClient(server);
    const key = await dpopKey('EdDSA');
    const proof = await dpopProof(key, 'POST', tokenUrl);
    const first = await clientCredentials(server, machine, proof);
    assert.equal(first.status, 200);
    const body = (await first.json()) as { token_type: string; access_token: string };
    assert.equal(body.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(body.access_token).cnf, { jkt: key.jkt });
    await refusal(await clientCredentials(server, machine, proof), 400, 'invalid_dpop_proof');
    // Without a proof, the same client gets a Bearer token.
    const plain = (await (await clientCredentials(server, machine)).json()) as { token_type: string };
    assert.equal(plain.token_type, 'Bearer');
  });

  it('refuses a wrong proof with invalid_dpop_proof', async () => {
    const machine = await machineClient(server);
    const key = await dpopKey();
    const privateJwk = await exportJWK(key.privateKey);
    const otherKey = (await dpopKey()).jwk;
    const now = Math.floor(Date.now() / 1000);
    const wrong = [
      await dpopProof(key, 'GET', tokenUrl),
      await dpopProof(key, 'POST', `${server.issuer}/oauth2/userinfo`),
      await dpopProof(key, 'POST', tokenUrl, { claims: { iat: now - 3600 } }),
      await dpopProof(key, 'POST', tokenUrl, { claims: { iat: now + 3600 } }),
      await dpopProof(key, 'POST', tokenUrl, { header: { typ: 'JWT' } }),
      await dpopProof(key, 'POST', tokenUrl, { header: { jwk: privateJwk } }),
      await dpopProof(key, 'POST', tokenUrl, { header: { jwk: otherKey } }),
      await dpopProof(key, 'POST', tokenUrl, { header: { jwk: undefined } }),
      'not.a.jwt',
    ];
    for (const proof of wrong)
      await refusal(await clientCredentials(server, machine, proof), 400, 'invalid_dpop_proof');
    // The query is not part of htu (§4.3); two DPoP headers are refused.
    const withQuery = await dpopProof(key, 'POST', `${tokenUrl}?x=1#f`);
    assert.equal((await clientCredentials(server, machine, withQuery)).status, 200);
    const two = `${await dpopProof(key, 'POST', tokenUrl)}, ${await dpopProof(key, 'POST', tokenUrl)}`;
    await refusal(await clientCredentials(server, machine, two), 400, 'invalid_dpop_proof');
  });

  it('a client that must use DPoP is refused a request without a proof', async () => {
    const machine = await machineClient(server, true);
    await refusal(await clientCredentials(server, machine), 400, 'invalid_dpop_proof');
    const ok = await clientCredentials(server, machine, await dpopProof(await dpopKey(), 'POST', tokenUrl));
    assert.equal(((await ok.json()) as { token_type: string }).token_type, 'DPoP');
  });

  it('clients create|update --require-dpop, and registration dpop_bound_access_tokens', async () => {
    const { lines, io } = cliIo(server);
    const args = ['clients', 'create', '--name', 'dpop', '--scope', 'apps', '--grant-types', 'client_credentials'];
    assert.equal(await run([...args, '--require-dpop', '--json'], io), 0, lines.join('\n'));
    const created = JSON.parse(lines.join('\n')) as { client_id: string; dpop_bound_access_tokens: boolean };
    assert.equal(created.dpop_bound_access_tokens, true);
    lines.length = 0;
    assert.equal(await run(['clients', 'update', created.client_id, '--no-require-dpop', '--json'], io), 0);
    assert.equal(
      (JSON.parse(lines.join('\n')) as { dpop_bound_access_tokens: boolean }).dpop_bound_access_tokens,
      false,
    );

    const registered = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example.com/cb'], dpop_bound_access_tokens: true }),
    });
    assert.equal(registered.status, 201);
    const metadata = (await registered.json()) as { client_id: string; dpop_bound_access_tokens?: boolean };
    assert.equal(metadata.dpop_bound_access_tokens, true);
    assert.equal((await server.store.getClient(metadata.client_id))?.requireDpop, true);
    const bad = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example.com/cb'], dpop_bound_access_tokens: 'yes' }),
    });
    await refusal(bad, 400, 'invalid_client_metadata');
  });
});

// The refresh binding is a condition of PostgreSQL's one-statement rotation too.
describe('DPoP-bound refresh tokens on PostgreSQL', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  let server: TestServer;
  before(async () => {
    if (database) server = await startServer({ databaseUrl: database.url });
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  it('openid-client, public client: refreshed with its key only', { skip: !database && 'PostgreSQL unreachable' }, () =>
    publicClientBinding(server),
  );
});

describe('DPoP nonces (TESSERA_DPOP_NONCE)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_DPOP_NONCE: 'true' } });
  });
  after(() => server.close());

  it('asks for a nonce (use_dpop_nonce, DPoP-Nonce) and accepts the proof that carries it', async () => {
    const machine = await machineClient(server);
    const key = await dpopKey();
    const tokenUrl = `${server.issuer}/oauth2/token`;
    const asked = await clientCredentials(server, machine, await dpopProof(key, 'POST', tokenUrl));
    const nonce = asked.headers.get('dpop-nonce');
    assert.ok(nonce);
    await refusal(asked, 400, 'use_dpop_nonce');
    const stale = await dpopProof(key, 'POST', tokenUrl, { claims: { nonce: 'stale' } });
    await refusal(await clientCredentials(server, machine, stale), 400, 'use_dpop_nonce');
    const answered = await clientCredentials(
      server,
      machine,
      await dpopProof(key, 'POST', tokenUrl, { claims: { nonce } }),
    );
    assert.equal(answered.status, 200);
    assert.ok(answered.headers.get('dpop-nonce'));

    // Userinfo asks as a protected resource does (§9): 401 with the DPoP challenge.
    const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: {
        authorization: 'DPoP x',
        dpop: await dpopProof(key, 'GET', `${server.issuer}/oauth2/userinfo`, { accessToken: 'x' }),
      },
    });
    assert.equal(userinfo.status, 401);
    assert.match(userinfo.headers.get('www-authenticate')!, /^DPoP .*error="use_dpop_nonce"/);
    assert.ok(userinfo.headers.get('dpop-nonce'));
  });

  it('openid-client retries with the nonce by itself', async () => {
    const machine = await machineClient(server);
    const config = await client.discovery(
      new URL(server.issuer),
      machine.id,
      machine.secret,
      client.ClientSecretBasic(machine.secret),
      { execute: [client.allowInsecureRequests] },
    );
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'apps' }, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
  });
});
