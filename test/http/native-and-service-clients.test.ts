// Native apps (RFC 8252): a loopback redirect URI registered without a port takes any port, path and
// query exactly, driven by a client listening on a random loopback port. Services (RFC 6749 §4.4):
// client_credentials through openid-client, an RFC 9068 token whose subject is the client.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';
import { run } from '../../src/cli/main.ts';
import { createClient } from '../../src/admin/clients.ts';
import { createVerifier } from '../../src/resource/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { ALL_SCOPES, startServer, type TestServer, cliIo } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

describe('native apps: loopback redirect URIs on any port (RFC 8252 §7.3)', () => {
  let server: TestServer;
  let app: Server;
  let port: number;
  let clientId: string;
  const received: URL[] = [];
  before(async () => {
    server = await startServer();
    const registered = [
      'http://127.0.0.1/callback',
      'http://[::1]/cb?app=1',
      'http://localhost/cb',
      'com.example.app:/oauth',
    ];
    const { client } = await createClient(server.store, server.config, {
      name: 'Native app',
      redirectUris: registered,
      scopes: ['openid', 'apps'],
      public: true,
    });
    clientId = client.clientId;
    // The app: a listener on a port the system picks, as a CLI or desktop app does.
    app = createServer((req, res) => {
      received.push(new URL(req.url!, `http://127.0.0.1:${port}`));
      res.end('You can close this window.');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    port = (app.address() as { port: number }).port;
  });
  after(async () => {
    app?.close();
    await server?.close();
  });

  const authorize = async (redirectUri: string) => {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid apps',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new BrowserSim(server.issuer);
    const first = await browser.request(`/oauth2/authorize?${params}`);
    if (first.status !== 302) return { status: first.status, verifier, callback: undefined };
    const callback = await browser.authorize(`${server.issuer}/oauth2/authorize?${params}`, server.user);
    return { status: 302, verifier, callback };
  };

  it('the app on its random port gets the code and exchanges it', async () => {
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const { callback, verifier } = await authorize(redirectUri);
    assert.equal(callback!.origin, `http://127.0.0.1:${port}`);
    await fetch(callback!); // the browser follows the redirect to the app
    const code = received.at(-1)!.searchParams.get('code')!;
    const response = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    });
    assert.equal(response.status, 200);
  });

  it('any port for [::1] and localhost too; path and query exactly; a private-use scheme as registered', async () => {
    assert.equal((await authorize('http://[::1]:50123/cb?app=1')).status, 302);
    assert.equal((await authorize('http://localhost:8080/cb')).status, 302);
    assert.equal((await authorize('com.example.app:/oauth')).status, 302);
    for (const refused of [
      `http://127.0.0.1:${port}/callback/other`,
      `http://127.0.0.1:${port}/callbac`,
      `http://127.0.0.1:${port}/callback?x=1`,
      'http://[::1]:50123/cb',
      'http://127.0.0.2:8080/callback',
      'https://127.0.0.1:8080/callback',
      'http://127.0.0.1.evil.example:8080/callback',
      'com.example.app:/oauth/other',
    ]) {
      assert.equal((await authorize(refused)).status, 400, refused);
    }
  });
});

describe('services: client_credentials (RFC 6749 §4.4)', () => {
  let server: TestServer;
  let service: { id: string; secret: string };
  before(async () => {
    server = await startServer();
    const { client, clientSecret } = await createClient(server.store, server.config, {
      name: 'Billing service',
      redirectUris: [],
      scopes: ['apps', 'webhooks'],
      public: false,
      grantTypes: ['client_credentials'],
    });
    service = { id: client.clientId, secret: clientSecret! };
  });
  after(() => server?.close());

  it("openid-client's clientCredentialsGrant gets an RFC 9068 token whose subject is the client", async () => {
    const config = await oidc.discovery(
      new URL(server.issuer),
      service.id,
      service.secret,
      oidc.ClientSecretBasic(service.secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    assert.ok(config.serverMetadata().grant_types_supported?.includes('client_credentials'));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'apps' });
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.id_token, undefined);
    assert.equal(tokens.scope, 'apps');
    assert.equal(decodeProtectedHeader(tokens.access_token).typ, 'at+jwt');
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.sub, service.id);
    assert.equal(claims.client_id, service.id);
    assert.equal(claims.grant_id, undefined);
    const verify = createVerifier({ issuer: server.issuer, audience: server.issuer });
    assert.equal((await verify(`Bearer ${tokens.access_token}`, { scopes: ['apps'] })).sub, service.id);

    // Without a scope: the client's registered API scopes.
    const all = await oidc.clientCredentialsGrant(config);
    assert.equal(all.scope, 'apps webhooks');

    // Introspection and revocation work; userinfo has no user to answer for.
    const form = (path: string, token: string) =>
      fetch(`${server.issuer}${path}`, {
        method: 'POST',
        headers: {
          authorization: basic(service.id, service.secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token }),
      });
    const active = (await (await form('/oauth2/introspect', tokens.access_token)).json()) as {
      active: boolean;
      sub: string;
    };
    assert.deepEqual([active.active, active.sub], [true, service.id]);
    const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(userinfo.status, 403);
    assert.equal((await form('/oauth2/revoke', tokens.access_token)).status, 200);
    assert.equal(
      ((await (await form('/oauth2/introspect', tokens.access_token)).json()) as { active: boolean }).active,
      false,
    );
  });

  it('invalid_scope for user scopes or unregistered ones; unauthorized_client for a client not registered for it', async () => {
    const ask = (scope: string, id = service.id, secret = service.secret) =>
      tokenRequest(server, { grant_type: 'client_credentials', scope }, basic(id, secret));
    for (const scope of ['openid', 'apps profile', 'email']) {
      const response = await ask(scope);
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_scope');
    }
    assert.equal(((await (await ask('admin')).json()) as { error: string }).error, 'invalid_scope');
    const c = server.clients.confidential;
    const other = await ask('apps', c.id, c.secret!);
    assert.equal(other.status, 400);
    assert.equal(((await other.json()) as { error: string }).error, 'unauthorized_client');
  });

  it('tessera clients create --grant-types: client_credentials needs no redirect URI, and no public client has it', async () => {
    const { lines, io } = cliIo(server);
    const create = (...extra: string[]) =>
      run(['clients', 'create', '--name', 'Svc', '--scope', 'apps webhooks', '--json', ...extra], io);
    assert.equal(await create('--grant-types', 'client_credentials'), 0);
    const created = JSON.parse(lines.join('\n')) as { grant_types: string[]; redirect_uris: string[] };
    assert.deepEqual(created.grant_types, ['client_credentials']);
    assert.deepEqual(created.redirect_uris, []);
    lines.length = 0;
    assert.equal(await create('--grant-types', 'client_credentials', '--public'), 2);
    assert.match(lines.join('\n'), /a --public client cannot use client_credentials/);
    assert.equal(await create('--grant-types', 'password'), 2);
    assert.equal(await create(), 2, 'the default grants need a redirect URI');
    assert.ok(ALL_SCOPES.includes('apps'));
  });
});
