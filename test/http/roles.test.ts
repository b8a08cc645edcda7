// Roles in tokens, as an application sees them through openid-client: a client asking for the
// `roles` scope finds the user's roles in the ID token, userinfo and the JWT access token, limited to
// the roles the operator lets it see, and an API reads them as `token.roles`; without the scope none.
// The `admin` scope: refused to a client not marked admin, to a user without the admin role, and
// through registration; a client marked admin gets it by client_credentials. The operator sets all of
// it up with the CLI, as in production.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { createVerifier } from '@tessera-oidc/server/resource';
import { run } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

interface Made {
  id: string;
  secret: string;
  redirectUri: string;
}

describe('roles in tokens and the admin scope', () => {
  let server: TestServer;
  const clients: Record<string, Made> = {};

  const cli = async (args: string[], stdin = '') => {
    const { io, lines } = cliIo(server, stdin);
    const code = await run(args, io);
    return { code, out: lines.join('\n') };
  };
  const ok = async (args: string[], stdin = '') => {
    const { code, out } = await cli(args, stdin);
    assert.equal(code, 0, out);
    return out;
  };
  const makeClient = async (name: string, args: string[]): Promise<Made> => {
    const redirectUri = `${server.issuer}/cb/${name}`;
    const out = await ok(['clients', 'create', '--name', name, '--redirect-uri', redirectUri, ...args, '--json']);
    const made = JSON.parse(out) as { client_id: string; client_secret: string };
    return { id: made.client_id, secret: made.client_secret, redirectUri };
  };

  before(async () => {
    server = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
    // Set up before the server reads any of these clients (it caches them for a few seconds).
    await ok(['users', 'update', 'alice', '--role', 'editor', '--role', 'viewer']);
    await ok(['users', 'create', '--username', 'bob', '--email', 'bob@example.com', '--password-stdin'], PASSWORD);
    clients.all = await makeClient('all', ['--scope', 'openid profile roles']);
    clients.editors = await makeClient('editors', ['--scope', 'openid roles', '--roles', 'editor,ops']);
    clients.ops = await makeClient('ops', ['--scope', 'openid roles']);
    await ok(['clients', 'update', clients.ops.id, '--roles', 'ops']);
    clients.unmarked = await makeClient('unmarked', ['--scope', 'openid admin']);
    clients.console = await makeClient('console', ['--scope', 'openid admin', '--admin']);
    clients.machine = await makeClient('machine', [
      '--grant-types',
      'client_credentials',
      '--scope',
      'admin',
      '--admin',
    ]);
    clients.plainMachine = await makeClient('plain-machine', [
      '--grant-types',
      'client_credentials',
      '--scope',
      'admin',
    ]);
  });
  after(() => server?.close());

  const signIn = async (made: Made, scope: string, user = { username: 'alice', password: PASSWORD }) => {
    const config = await oidc.discovery(
      new URL(server.issuer),
      made.id,
      made.secret,
      oidc.ClientSecretBasic(made.secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: made.redirectUri, scope, state });
    const callback = await new BrowserSim(server.issuer).authorize(url.href, user);
    return { config, callback, state };
  };

  const tokensFor = async (made: Made, scope: string) => {
    const { config, callback, state } = await signIn(made, scope);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: state, idTokenExpected: true });
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    return { config, tokens, idToken: tokens.claims()!, accessToken: decodeJwt(tokens.access_token), userinfo };
  };

  it('discovery lists the roles scope and claim, and does not advertise admin', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as {
      scopes_supported: string[];
      claims_supported: string[];
    };
    assert.ok(metadata.scopes_supported.includes('roles'));
    assert.ok(metadata.claims_supported.includes('roles'));
    assert.ok(!metadata.scopes_supported.includes('admin'));
  });

  it('a client asking for roles sees every role in the ID token, userinfo and access token, and an API too', async () => {
    const { config, tokens, idToken, accessToken, userinfo } = await tokensFor(clients.all!, 'openid profile roles');
    assert.deepEqual(idToken.roles, ['editor', 'viewer']);
    assert.deepEqual(userinfo.roles, ['editor', 'viewer']);
    assert.deepEqual(accessToken.roles, ['editor', 'viewer']);
    const verify = createVerifier({ issuer: server.issuer, audience: server.issuer });
    const token = await verify(`Bearer ${tokens.access_token}`, { scopes: ['roles'] });
    assert.deepEqual(token.roles, ['editor', 'viewer']);
    // A refresh reads the user's roles as they are now.
    await ok(['users', 'update', 'alice', '--no-role', 'viewer']);
    try {
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.deepEqual(refreshed.claims()!.roles, ['editor']);
      assert.deepEqual(decodeJwt(refreshed.access_token).roles, ['editor']);
    } finally {
      await ok(['users', 'update', 'alice', '--role', 'viewer']);
    }
  });

  it("a client limited to some roles sees only those; one that may see none of the user's sees no claim", async () => {
    const editors = await tokensFor(clients.editors!, 'openid roles');
    assert.deepEqual(editors.idToken.roles, ['editor']);
    assert.deepEqual(editors.userinfo.roles, ['editor']);
    assert.deepEqual(editors.accessToken.roles, ['editor']);
    const verify = createVerifier({ issuer: server.issuer, audience: server.issuer });
    assert.deepEqual((await verify(`Bearer ${editors.tokens.access_token}`)).roles, ['editor']);

    const ops = await tokensFor(clients.ops!, 'openid roles');
    assert.equal(ops.idToken.roles, undefined);
    assert.equal(ops.userinfo.roles, undefined);
    assert.equal(ops.accessToken.roles, undefined);
    assert.deepEqual((await verify(`Bearer ${ops.tokens.access_token}`)).roles, []);
  });

  it('without the roles scope, no roles anywhere', async () => {
    const { tokens, idToken, accessToken, userinfo } = await tokensFor(clients.all!, 'openid profile');
    assert.equal(idToken.preferred_username, 'alice');
    assert.equal(idToken.roles, undefined);
    assert.equal(userinfo.roles, undefined);
    assert.equal(accessToken.roles, undefined);
    const verify = createVerifier({ issuer: server.issuer, audience: server.issuer });
    assert.deepEqual((await verify(`Bearer ${tokens.access_token}`)).roles, []);
  });

  it('the admin scope is refused to a client not marked admin, even one registered for it', async () => {
    const { callback } = await signIn(clients.unmarked!, 'openid admin');
    assert.equal(callback.searchParams.get('error'), 'invalid_scope');
    assert.match(callback.searchParams.get('error_description')!, /admin clients/);
  });

  it('the admin scope is refused, not consented to, for a user without the admin role', async () => {
    const bob = { username: 'bob', password: PASSWORD };
    const { callback } = await signIn(clients.console!, 'openid admin', bob);
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.match(callback.searchParams.get('error_description')!, /admin role/);
    assert.equal(callback.searchParams.get('code'), null);
  });

  it('a user with the admin role gets it at a marked client, and loses it at the next refresh without the role', async () => {
    await ok(['users', 'update', 'alice', '--admin']);
    try {
      const { config, tokens, idToken } = await tokensFor(clients.console!, 'openid admin');
      assert.equal(tokens.scope, 'openid admin');
      assert.equal(idToken.roles, undefined, 'roles only with the roles scope');
      await ok(['users', 'update', 'alice', '--no-admin']);
      await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token!), (err: Error & { error?: string }) => {
        assert.equal(err.error, 'invalid_grant');
        return true;
      });
    } finally {
      await ok(['users', 'update', 'alice', '--no-admin']);
    }
  });

  it('client_credentials gives admin only to a client marked admin', async () => {
    const grant = async (made: Made, form: Record<string, string> = { scope: 'admin' }) => {
      const response = await tokenRequest(
        server,
        { grant_type: 'client_credentials', ...form },
        basic(made.id, made.secret),
      );
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const marked = await grant(clients.machine!);
    assert.equal(marked.status, 200, JSON.stringify(marked.body));
    assert.equal(decodeJwt(marked.body.access_token!).scope, 'admin');
    const unmarked = await grant(clients.plainMachine!);
    assert.equal(unmarked.status, 400);
    assert.equal(unmarked.body.error, 'invalid_scope');
    // Without a scope, the registered scopes it may hold.
    assert.equal((await grant(clients.machine!, {})).body.scope, 'admin');
    assert.equal((await grant(clients.plainMachine!, {})).body.scope, '');
  });

  it('registration never gives the admin scope, nor does TESSERA_REGISTRATION_SCOPES', async () => {
    const response = await fetch(`${server.issuer}/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [`${server.issuer}/cb/self`], scope: 'openid admin' }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_client_metadata');
    assert.match(body.error_description, /admin scope is never granted through registration/);
    assert.throws(
      () => loadConfig({ NODE_ENV: 'test', TESSERA_REGISTRATION_SCOPES: 'openid admin' }),
      /TESSERA_REGISTRATION_SCOPES: admin is never granted through registration/,
    );
  });
});
