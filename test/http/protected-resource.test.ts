// RFC 9728 protected resource metadata and the RFC 6750 challenges that point to it. The tokens carry the
// API's resource identifier as `aud` (RFC 8707); they are signed here with a local key whose JWKS a small
// server publishes, as Tessera's side of resource indicators is not part of these tests.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { exampleApi } from '../../examples/api.ts';
import { BearerError, createProtectedResource, createVerifier } from '@tessera-oidc/server/resource';
import { freePort } from '../helpers/server.ts';

const ISSUER = 'https://tessera.test';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';

async function listen(server: Server, port = 0): Promise<string> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('APIs that describe themselves with protected resource metadata', () => {
  let privateKey: CryptoKey;
  let keyServer: Server;
  let jwksUri: string;
  let introspectionEndpoint: string;
  // The API at the root of its origin, and one whose resource identifier has a path.
  let api: Server;
  let resource: string;
  let pathApi: Server;
  let pathOrigin: string;

  before(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    // The JWKS, and an introspection endpoint that always fails.
    keyServer = createServer((request, response) => {
      if (request.url === '/jwks') response.writeHead(200, { 'content-type': 'application/json' });
      else response.writeHead(500);
      response.end(request.url === '/jwks' ? JSON.stringify(jwks) : '');
    });
    const keysUrl = await listen(keyServer);
    jwksUri = `${keysUrl}/jwks`;
    introspectionEndpoint = `${keysUrl}/introspect`;

    const port = await freePort();
    resource = `http://127.0.0.1:${port}`;
    api = exampleApi({ issuer: ISSUER, resource, jwksUri });
    await listen(api, port);

    const pathPort = await freePort();
    pathOrigin = `http://127.0.0.1:${pathPort}`;
    pathApi = exampleApi({ issuer: ISSUER, resource: `${pathOrigin}/v1`, jwksUri });
    await listen(pathApi, pathPort);
  });
  after(async () => {
    await Promise.all([close(api), close(pathApi), close(keyServer)]);
  });

  const now = () => Math.floor(Date.now() / 1000);
  function accessToken(claims: { aud?: string; scope?: string; iat?: number; exp?: number } = {}): Promise<string> {
    const iat = claims.iat ?? now();
    return new SignJWT({ client_id: 'client_1', scope: claims.scope ?? 'apps', jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
      .setIssuer(ISSUER)
      .setSubject('user_1')
      .setAudience(claims.aud ?? resource)
      .setIssuedAt(iat)
      .setExpirationTime(claims.exp ?? iat + 300)
      .sign(privateKey);
  }
  const call = (path: string, token?: string) =>
    fetch(`${resource}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('serves the metadata document at the well-known path (RFC 9728 §2, §3)', async () => {
    const response = await fetch(`${resource}${WELL_KNOWN}`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^application\/json/);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(await response.json(), {
      resource,
      authorization_servers: [ISSUER],
      scopes_supported: ['apps', 'webhooks'],
      bearer_methods_supported: ['header'],
      resource_name: 'Example API',
    });
  });

  it("puts the resource's path after the well-known prefix (RFC 9728 §3.1)", async () => {
    const response = await fetch(`${pathOrigin}${WELL_KNOWN}/v1`);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { resource: string }).resource, `${pathOrigin}/v1`);
    assert.equal((await fetch(`${pathOrigin}${WELL_KNOWN}`)).status, 404);

    const at = (id: string) => {
      const { metadataPath, metadataUrl, metadata } = createProtectedResource({ issuer: `${ISSUER}/`, resource: id });
      assert.equal(metadata.resource, id, 'the identifier as given');
      assert.deepEqual(metadata.authorization_servers, [ISSUER]);
      assert.equal(metadata.scopes_supported, undefined);
      return [metadataPath, metadataUrl];
    };
    assert.deepEqual(at('https://api.example.com'), [WELL_KNOWN, `https://api.example.com${WELL_KNOWN}`]);
    assert.deepEqual(at('https://api.example.com/'), [WELL_KNOWN, `https://api.example.com${WELL_KNOWN}`]);
    assert.deepEqual(at('https://api.example.com:8443/v1/orders'), [
      `${WELL_KNOWN}/v1/orders`,
      `https://api.example.com:8443${WELL_KNOWN}/v1/orders`,
    ]);
    assert.deepEqual(at('http://localhost:4000/v1/'), [`${WELL_KNOWN}/v1/`, `http://localhost:4000${WELL_KNOWN}/v1/`]);
  });

  it('refuses a resource that is not an https URL without query or fragment', () => {
    for (const id of [
      'api.example.com',
      'http://api.example.com',
      'https://api.example.com/#top',
      'https://api.example.com/v1?tenant=1',
      'https://user:secret@api.example.com',
    ]) {
      assert.throws(() => createProtectedResource({ issuer: ISSUER, resource: id }), TypeError, id);
    }
  });

  it('no token → 401 whose challenge names the metadata and no error (RFC 6750 §3.1, RFC 9728 §5.1)', async () => {
    const metadataUrl = `${resource}${WELL_KNOWN}`;
    const none = await call('/apps');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), `Bearer scope="apps", resource_metadata="${metadataUrl}"`);
    assert.equal(((await none.json()) as { error?: string }).error, undefined);
    const basic = await fetch(`${resource}/apps`, { headers: { authorization: 'Basic dXNlcjpwdw==' } });
    assert.equal(basic.status, 401);
    assert.equal(basic.headers.get('www-authenticate'), `Bearer scope="apps", resource_metadata="${metadataUrl}"`);

    // RFC 9728 §3.3: the document the challenge names is about this resource.
    const named = /resource_metadata="([^"]+)"/.exec(none.headers.get('www-authenticate')!)![1]!;
    assert.equal(((await (await fetch(named)).json()) as { resource: string }).resource, resource);

    const plain = createProtectedResource({ issuer: ISSUER, resource });
    assert.equal(plain.challenge(), `Bearer resource_metadata="${metadataUrl}"`);
  });

  it('a token for the resource is served; without the scope → 403 insufficient_scope', async () => {
    const token = await accessToken({ scope: 'apps' });
    const apps = await call('/apps', token);
    assert.equal(apps.status, 200);
    assert.equal(((await apps.json()) as { owner: string }).owner, 'user_1');
    const webhooks = await call('/webhooks', token);
    assert.equal(webhooks.status, 403);
    assert.equal(
      webhooks.headers.get('www-authenticate'),
      'Bearer error="insufficient_scope", error_description="the access token lacks the scope webhooks", ' +
        `scope="webhooks", resource_metadata="${resource}${WELL_KNOWN}"`,
    );
    assert.equal(((await webhooks.json()) as { error: string }).error, 'insufficient_scope');
  });

  it('an invalid or expired token → 401 invalid_token naming the metadata', async () => {
    const expired = await accessToken({ iat: now() - 600, exp: now() - 300 });
    for (const [token, description] of [
      ['abc.def.ghi', 'the access token is invalid'],
      [expired, 'the access token has expired'],
    ] as const) {
      const response = await call('/apps', token);
      assert.equal(response.status, 401);
      assert.equal(
        response.headers.get('www-authenticate'),
        `Bearer error="invalid_token", error_description="${description}", resource_metadata="${resource}${WELL_KNOWN}"`,
      );
    }
  });

  it('checks the audience: the resource by default, or the one configured', async () => {
    for (const aud of [ISSUER, 'https://other.example', `${pathOrigin}/v1`]) {
      const response = await call('/apps', await accessToken({ aud }));
      assert.equal(response.status, 401, aud);
      assert.match(response.headers.get('www-authenticate')!, /^Bearer error="invalid_token", /);
    }
    const issuerAudience = createProtectedResource({ issuer: ISSUER, resource, audience: ISSUER, jwksUri });
    assert.equal((await issuerAudience.verify(`Bearer ${await accessToken({ aud: ISSUER })}`)).sub, 'user_1');
    await assert.rejects(
      issuerAudience.verify(`Bearer ${await accessToken()}`),
      (err: unknown) => err instanceof BearerError && err.code === 'invalid_token',
    );
  });

  it('challenges quote and escape their values', async () => {
    const metadataUrl = 'https://api.example.com/.well-known/oauth-protected-resource/a"b\\c';
    const error = new BearerError('invalid_token', 'a "quoted"\\ description\n', 'apps', {
      resourceMetadata: metadataUrl,
    });
    assert.equal(
      error.wwwAuthenticate,
      'Bearer error="invalid_token", error_description="a quoted description", scope="apps", ' +
        'resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/a\\"b\\\\c"',
    );
    // An error from a plain verifier gains the resource's metadata URL.
    const verify = createVerifier({ issuer: ISSUER, audience: resource, jwksUri });
    const thrown = await verify(undefined, { scopes: ['apps', 'webhooks'] }).catch((err: unknown) => err);
    assert.ok(thrown instanceof BearerError && thrown.tokenMissing);
    assert.equal(thrown.wwwAuthenticate, 'Bearer scope="apps webhooks"');
    const protectedResource = createProtectedResource({ issuer: ISSUER, resource: 'https://api.example.com/v1' });
    assert.equal(
      protectedResource.challenge(thrown),
      `Bearer scope="apps webhooks", resource_metadata="https://api.example.com${WELL_KNOWN}/v1"`,
    );
  });

  it('introspection that fails is logged and answered 503 without details', async (t) => {
    const logged = t.mock.method(console, 'error', () => {});
    const failing = exampleApi({
      issuer: ISSUER,
      resource,
      jwksUri,
      introspection: { clientId: 'api', clientSecret: 'secret', endpoint: introspectionEndpoint },
    });
    const url = await listen(failing);
    try {
      const response = await fetch(`${url}/apps`, { headers: { authorization: `Bearer ${await accessToken()}` } });
      assert.equal(response.status, 503);
      assert.deepEqual(await response.json(), { error: 'temporarily_unavailable' });
      assert.equal(logged.mock.callCount(), 1);
      assert.match(String(logged.mock.calls[0]!.arguments[0]), /introspection at .* failed with HTTP 500/);
    } finally {
      await close(failing);
    }
  });
});
