// The resource-server module and the example API, with tokens from a real flow.
import { CLI } from '../../src/events/index.ts';
import { rotateKey } from '../../src/tokens/key-rotation.ts';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exampleApi } from '../../examples/api.ts';
import { createClient } from '../../src/admin/clients.ts';
import { BearerError, createVerifier } from '@tessera-oidc/server/resource';
import { freePort, startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode } from '../helpers/tokens.ts';

describe('APIs that accept the tokens', () => {
  let server: TestServer;
  let api: Server;
  let apiUrl: string;
  before(async () => {
    server = await startServer();
    // The API registers as a confidential client so it may ask introspection about revocation.
    const { client, clientSecret } = await createClient(server.store, server.config, {
      name: 'Example API',
      redirectUris: ['https://api.example/unused'],
      scopes: ['apps'],
      public: false,
    });
    // Tokens issued without a resource carry Tessera's default audience, the issuer.
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = exampleApi({
      issuer: server.issuer,
      resource: apiUrl,
      audience: server.issuer,
      introspection: { clientId: client.clientId, clientSecret: clientSecret! },
    });
    await new Promise<void>((resolve) => api.listen(port, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => api.close(resolve));
    await server.close();
  });

  async function accessToken(scope: string): Promise<string> {
    const issued = await getCode(server, server.clients.confidential, { scope });
    return ((await (await exchange(server, issued)).json()) as { access_token: string }).access_token;
  }
  const call = (path: string, token?: string) =>
    fetch(`${apiUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('wrong introspection credentials: 503 to the client, and the log says why', async () => {
    const misconfigured = exampleApi({
      issuer: server.issuer,
      resource: 'http://127.0.0.1:1',
      audience: server.issuer,
      introspection: { clientId: server.clients.confidential.id, clientSecret: 'wrong' },
    });
    await new Promise<void>((resolve) => misconfigured.listen(0, '127.0.0.1', resolve));
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: string) => void logged.push(line);
    try {
      const port = (misconfigured.address() as { port: number }).port;
      const token = await accessToken('openid apps');
      const answer = await fetch(`http://127.0.0.1:${port}/apps`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(answer.status, 503);
      assert.match(
        logged.join('\n'),
        /refused the API's client credentials \(HTTP 401\): check its client id and secret/,
      );
    } finally {
      console.error = original;
      await new Promise((resolve) => misconfigured.close(resolve));
    }
  });

  it('a token with the scope is served', async () => {
    const token = await accessToken('openid apps webhooks');
    const apps = await call('/apps', token);
    assert.equal(apps.status, 200);
    assert.equal(((await apps.json()) as { owner: string }).owner, server.user.id);
    assert.equal((await call('/webhooks', token)).status, 200);
  });

  it('a token without the scope → 403 insufficient_scope naming the scope', async () => {
    const token = await accessToken('openid apps');
    const response = await call('/webhooks', token);
    assert.equal(response.status, 403);
    assert.match(response.headers.get('www-authenticate')!, /^Bearer error="insufficient_scope", .*scope="webhooks"/);
  });

  it('no token → 401 naming no error (RFC 6750 §3.1); a bad token, a revoked token → 401 invalid_token', async () => {
    const none = await call('/apps');
    assert.equal(none.status, 401);
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer scope="apps", resource_metadata="${apiUrl}/.well-known/oauth-protected-resource"`,
    );
    const bad = await call('/apps', 'abc.def.ghi');
    assert.equal(bad.status, 401);
    assert.match(bad.headers.get('www-authenticate')!, /^Bearer error="invalid_token", /);
    const token = await accessToken('openid apps');
    const c = server.clients.confidential;
    await fetch(`${server.issuer}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
      body: new URLSearchParams({ token }),
    });
    const revoked = await call('/apps', token);
    assert.equal(revoked.status, 401);
    assert.match(revoked.headers.get('www-authenticate')!, /error="invalid_token"/);
  });

  it('verifies locally against the JWKS, refetching it for a new kid; checks typ, iss, aud', async () => {
    const verify = createVerifier({ issuer: server.issuer, audience: server.issuer, jwksCooldown: 0 });
    const first = await accessToken('openid apps');
    assert.equal((await verify(`Bearer ${first}`, { scopes: ['apps'] })).sub, server.user.id);
    await rotateKey(server.keys, server.config.signingAlg, { emergency: true, requester: CLI });
    const second = await accessToken('openid apps');
    assert.equal((await verify(`Bearer ${second}`)).client_id, server.clients.confidential.id);

    const otherAudience = createVerifier({ issuer: server.issuer, audience: 'https://other.example' });
    await assert.rejects(
      otherAudience(`Bearer ${second}`),
      (err: unknown) => err instanceof BearerError && err.code === 'invalid_token',
    );
    const otherIssuer = createVerifier({
      issuer: 'https://other.example',
      audience: server.issuer,
      jwksUri: `${server.issuer}/oauth2/jwks`,
    });
    await assert.rejects(
      otherIssuer(`Bearer ${second}`),
      (err: unknown) => err instanceof BearerError && err.status === 401,
    );
    const issued = await getCode(server, server.clients.confidential, { scope: 'openid' });
    const { id_token } = (await (await exchange(server, issued)).json()) as { id_token: string };
    await assert.rejects(
      verify(`Bearer ${id_token}`),
      (err: unknown) => err instanceof BearerError && err.code === 'invalid_token',
      'an ID token is not an access token',
    );
    // RFC 6750 §3.1: another scheme is no token at all; a malformed Bearer header is a bad request.
    await assert.rejects(verify('Basic abc'), (err: unknown) => {
      assert.ok(err instanceof BearerError && err.tokenMissing && err.status === 401);
      assert.equal(err.wwwAuthenticate, 'Bearer');
      return true;
    });
    await assert.rejects(
      verify('Bearer a b'),
      (err: unknown) => err instanceof BearerError && err.code === 'invalid_request' && err.status === 400,
    );
  });
});
