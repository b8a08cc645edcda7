// Clients that authenticate with a JWT (RFC 7523 §2.2, OIDC Core §9): private_key_jwt with keys given
// inline or at a jwks_uri, and client_secret_jwt, registered with the CLI as an operator would and
// driven by openid-client and oauth4webapi; a reused assertion, a wrong audience, an assertion too
// long-lived or signed with an alg its method does not take are refused (invalid_client) and
// counted by the throttle; a key rotated at the jwks_uri is fetched again; revocation and
// introspection take assertions too; a client that registers itself may use private_key_jwt; the MCP
// SDK's PrivateKeyJwtProvider and ClientCredentialsProvider get a machine client its token.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { run } from '../../src/cli/main.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function keyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { privateKey, jwk, kid };
}

describe('private_key_jwt and client_secret_jwt', () => {
  let server: TestServer;
  let jwksServer: Server;
  let jwksUri: string;
  let served: { keys: JWK[] } = { keys: [] };
  let fetches = 0;
  let as: oauth.AuthorizationServer;
  const tokenEndpoint = () => `${server.issuer}/oauth2/token`;

  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    const { lines, io } = cliIo(server);
    io.env.TESSERA_OUTBOUND_ALLOW_PRIVATE = 'true';
    const code = await run([...args, '--json'], io);
    assert.equal(code, 0, lines.join('\n'));
    server.store.clearCaches();
    return JSON.parse(lines.join('\n')) as Record<string, unknown>;
  }

  async function createService(...args: string[]): Promise<string> {
    const created = await cli(
      'clients',
      'create',
      '--name',
      'Service',
      '--grant-types',
      'client_credentials',
      '--scope',
      'apps',
      ...args,
    );
    return created.client_id as string;
  }

  function assertion(clientId: string, key: PrivateKey, kid: string, claims: Record<string, unknown> = {}) {
    return new SignJWT({ jti: crypto.randomUUID(), ...claims })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience((claims.aud as string) ?? tokenEndpoint())
      .setIssuedAt()
      .setExpirationTime((claims.exp as number) ?? '60s')
      .sign(key);
  }

  function tokenRequest(clientId: string, clientAssertion: string, extra: Record<string, string> = {}) {
    return fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: clientAssertion,
        ...extra,
      }),
    });
  }

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', TESSERA_REGISTRATION: 'open' } });
    jwksServer = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const address = jwksServer.address() as { port: number };
    jwksUri = `http://127.0.0.1:${address.port}/jwks`;
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(async () => {
    await new Promise((resolve) => jwksServer?.close(resolve));
    await server?.close();
  });

  it('discovery names both methods and their algs', () => {
    assert.ok(as.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
    assert.ok(as.token_endpoint_auth_methods_supported?.includes('client_secret_jwt'));
    assert.ok(as.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'));
  });

  it('openid-client: a token with a key given inline (--jwks)', async () => {
    const { privateKey, jwk } = await keyPair('inline-1');
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [jwk] }));
    const shown = await cli('clients', 'show', id);
    assert.equal(shown.token_endpoint_auth_method, 'private_key_jwt');
    assert.equal(shown.client_secret, undefined);
    const config = await client.discovery(
      new URL(server.issuer),
      id,
      {},
      client.PrivateKeyJwt({ key: privateKey, kid: jwk.kid }),
      { execute: [client.allowInsecureRequests] },
    );
    const tokens = await client.clientCredentialsGrant(config, { scope: 'apps' });
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.scope, 'apps');
  });

  it('oauth4webapi: a token with keys at a jwks_uri, fetched again when the client rotates its key', async () => {
    const first = await keyPair('uri-1');
    served = { keys: [first.jwk] };
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks-uri', jwksUri);
    const c: oauth.Client = { client_id: id };
    const grant = async (key: PrivateKey, kid: string) => {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        c,
        oauth.PrivateKeyJwt({ key, kid }),
        { scope: 'apps' },
        insecure,
      );
      return oauth.processClientCredentialsResponse(as, c, response);
    };
    const before = fetches;
    assert.equal((await grant(first.privateKey, first.kid)).scope, 'apps');
    assert.equal((await grant(first.privateKey, first.kid)).scope, 'apps');
    assert.equal(fetches - before, 1, 'the JWK Set is kept between requests');
    const second = await keyPair('uri-2');
    served = { keys: [first.jwk, second.jwk] };
    server.clock.offset += 60; // past the wait between fetches an unknown kid may cause
    assert.equal((await grant(second.privateKey, second.kid)).scope, 'apps');
    assert.equal(fetches - before, 2, 'an unknown kid fetched the JWK Set again');
    server.clock.offset -= 60;
  });

  it('a reused assertion, a wrong audience, a far expiry, another alg: invalid_client', async () => {
    const { privateKey, jwk, kid } = await keyPair('misuse');
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [jwk] }));
    const once = await assertion(id, privateKey, kid);
    assert.equal((await tokenRequest(id, once)).status, 200);
    const again = await tokenRequest(id, once);
    assert.equal(again.status, 401);
    assert.equal(((await again.json()) as { error: string }).error, 'invalid_client');
    // The issuer is an audience too (as node-oidc-provider accepts); another server's is not.
    assert.equal((await tokenRequest(id, await assertion(id, privateKey, kid, { aud: server.issuer }))).status, 200);
    const refused = [
      await assertion(id, privateKey, kid, { aud: 'https://elsewhere.example/token' }),
      await assertion(id, privateKey, kid, { exp: Math.floor(Date.now() / 1000) + 3600 }),
      await assertion(id, privateKey, kid, { exp: Math.floor(Date.now() / 1000) - 120 }),
      await new SignJWT({ jti: 'hs' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(id)
        .setSubject(id)
        .setAudience(tokenEndpoint())
        .setExpirationTime('60s')
        .sign(new TextEncoder().encode('x'.repeat(32))),
    ];
    for (const jwt of refused) {
      const response = await tokenRequest(id, jwt);
      assert.equal(response.status, 401);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_client');
    }
    // The same client with a secret: refused, as a client registered for another method is.
    const basic = await fetch(tokenEndpoint(), {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${id}:nothing`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    assert.equal(basic.status, 401);
    // Two methods at once: invalid_request.
    const both = await tokenRequest(id, await assertion(id, privateKey, kid), { client_secret: 'x' });
    assert.equal(both.status, 400);
  });

  it('failed assertions count as wrong secrets: the client is throttled', async () => {
    const { privateKey, jwk, kid } = await keyPair('throttled');
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [jwk] }));
    const wrong = await keyPair('throttled');
    let status = 0;
    for (let i = 0; i < 30 && status !== 429; i++) {
      status = (await tokenRequest(id, await assertion(id, wrong.privateKey, kid))).status;
    }
    assert.equal(status, 429);
    assert.equal((await tokenRequest(id, await assertion(id, privateKey, kid))).status, 429);
  });

  it("the MCP SDK's PrivateKeyJwtProvider: a machine client's token (client_credentials)", async () => {
    const { privateKey, jwk, kid } = await keyPair('mcp');
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [jwk] }));
    const provider = new PrivateKeyJwtProvider({
      clientId: id,
      privateKey: { ...(await exportJWK(privateKey)), kid },
      algorithm: 'ES256',
      scope: 'apps',
      expectedIssuer: server.issuer,
    });
    assert.equal(await auth(provider, { serverUrl: server.issuer }), 'AUTHORIZED');
    assert.equal(provider.tokens()?.scope, 'apps');
  });

  it("the MCP SDK's ClientCredentialsProvider: a machine client's token with its secret", async () => {
    const created = await cli(
      'clients',
      'create',
      '--name',
      'MCP',
      '--grant-types',
      'client_credentials',
      '--scope',
      'apps',
    );
    const provider = new ClientCredentialsProvider({
      clientId: created.client_id as string,
      clientSecret: created.client_secret as string,
      scope: 'apps',
      expectedIssuer: server.issuer,
    });
    assert.equal(await auth(provider, { serverUrl: server.issuer }), 'AUTHORIZED');
    assert.equal(provider.tokens()?.scope, 'apps');
    // A wrong secret is refused by the server, not taken for a success.
    const wrong = new ClientCredentialsProvider({
      clientId: created.client_id as string,
      clientSecret: 'not-the-secret',
      scope: 'apps',
      expectedIssuer: server.issuer,
    });
    await assert.rejects(auth(wrong, { serverUrl: server.issuer }));
  });

  it('client_secret_jwt with openid-client, also after the secret is rotated', async () => {
    const created = await cli(
      'clients',
      'create',
      '--name',
      'HMAC',
      '--grant-types',
      'client_credentials',
      '--scope',
      'apps',
      '--auth-method',
      'client_secret_jwt',
    );
    const id = created.client_id as string;
    const grant = async (secret: string) => {
      const config = await client.discovery(new URL(server.issuer), id, {}, client.ClientSecretJwt(secret), {
        execute: [client.allowInsecureRequests],
      });
      return client.clientCredentialsGrant(config, { scope: 'apps' });
    };
    assert.equal((await grant(created.client_secret as string)).scope, 'apps');
    const rotated = await cli('clients', 'rotate-secret', id);
    // The old secret stops at once (no grace period for client_secret_jwt): a 401 challenge.
    await assert.rejects(
      grant(created.client_secret as string),
      (err: Error & { status?: number }) => err.status === 401,
    );
    assert.equal((await grant(rotated.client_secret as string)).scope, 'apps');
  });

  it('revocation and introspection take assertions', async () => {
    const { privateKey, jwk, kid } = await keyPair('status');
    const id = await createService('--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [jwk] }));
    const { access_token } = (await (await tokenRequest(id, await assertion(id, privateKey, kid))).json()) as {
      access_token: string;
    };
    const form = async (path: string, aud: string) =>
      fetch(`${server.issuer}${path}`, {
        method: 'POST',
        body: new URLSearchParams({
          token: access_token,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await assertion(id, privateKey, kid, { aud }),
        }),
      });
    const introspected = await form('/oauth2/introspect', `${server.issuer}/oauth2/introspect`);
    assert.equal(((await introspected.json()) as { active: boolean }).active, true);
    assert.equal((await form('/oauth2/revoke', server.issuer)).status, 200);
    const after = await form('/oauth2/introspect', server.issuer);
    assert.equal(((await after.json()) as { active: boolean }).active, false);
  });

  it('a client that registers itself with jwks uses private_key_jwt; a private key is refused', async () => {
    const { privateKey, jwk } = await keyPair('registered');
    const register = (body: unknown) =>
      fetch(`${server.issuer}/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const metadata = {
      redirect_uris: ['https://agent.example/cb'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
    };
    const response = await register(metadata);
    assert.equal(response.status, 201, await response.clone().text());
    const registered = (await response.json()) as Record<string, unknown>;
    assert.equal(registered.client_secret, undefined);
    assert.equal(registered.token_endpoint_auth_method, 'private_key_jwt');
    const keyless = await register({ ...metadata, jwks: undefined });
    assert.equal(((await keyless.json()) as { error: string }).error, 'invalid_client_metadata');
    const privateJwk = await exportJWK(privateKey);
    const leaked = await register({ ...metadata, jwks: { keys: [privateJwk] } });
    assert.equal(((await leaked.json()) as { error: string }).error, 'invalid_client_metadata');
  });
});
