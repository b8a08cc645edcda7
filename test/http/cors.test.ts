// Apps in the browser: CORS on discovery and the JWKS for any origin; on the token, userinfo and
// revocation endpoints for the client's allowed origins only (a public client's redirect URIs'
// origins, and --allowed-origin), never with credentials; a token request from an origin its client
// does not allow redeems nothing; public clients' refresh tokens end a day after the sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createClient } from '../../src/admin/clients.ts';
import { startServer, type TestClient, type TestServer, cliIo } from '../helpers/server.ts';
import { basic, exchange, getCode } from '../helpers/tokens.ts';

const SPA = 'https://spa.example';

describe('CORS for apps in the browser', () => {
  let server: TestServer;
  let spa: TestClient;
  before(async () => {
    server = await startServer();
    const { client } = await createClient(server.store, server.config, {
      name: 'SPA',
      redirectUris: [`${SPA}/callback`, 'com.example.app:/cb'],
      scopes: ['openid', 'profile', 'email', 'apps'],
      public: true,
    });
    spa = { id: client.clientId, secret: null, redirectUri: `${SPA}/callback`, postLogoutRedirectUri: '' };
  });
  after(() => server?.close());

  const post = (path: string, form: Record<string, string>, origin?: string, authorization?: string) =>
    fetch(`${server.issuer}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin ? { origin } : {}),
        ...(authorization ? { authorization } : {}),
      },
      body: new URLSearchParams(form),
    });

  it('discovery and the JWKS: any origin, preflights answered', async () => {
    for (const path of ['/.well-known/openid-configuration', '/oauth2/jwks']) {
      const response = await fetch(`${server.issuer}${path}`, { headers: { origin: 'https://anyone.example' } });
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      const preflight = await fetch(`${server.issuer}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://anyone.example', 'access-control-request-method': 'GET' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    }
  });

  it('the token endpoint: the public client from its own origin reads the answer; from another, nothing is redeemed', async () => {
    const preflight = await fetch(`${server.issuer}/oauth2/token`, {
      method: 'OPTIONS',
      headers: {
        origin: SPA,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), SPA);
    assert.match(preflight.headers.get('access-control-allow-headers')!, /authorization, content-type/);
    assert.equal(preflight.headers.get('access-control-allow-credentials'), null);

    const issued = await getCode(server, spa);
    const form = {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: spa.redirectUri,
      code_verifier: issued.verifier!,
      client_id: spa.id,
    };
    const refused = await post('/oauth2/token', form, 'https://evil.example');
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'invalid_request');
    assert.equal(refused.headers.get('access-control-allow-origin'), null);

    const accepted = await post('/oauth2/token', form, SPA);
    assert.equal(accepted.status, 200, 'the refused request redeemed nothing');
    assert.equal(accepted.headers.get('access-control-allow-origin'), SPA);
    assert.match(accepted.headers.get('vary')!, /Origin/);
    assert.equal(accepted.headers.get('access-control-expose-headers'), 'WWW-Authenticate, Retry-After, DPoP-Nonce');
    assert.equal(accepted.headers.get('access-control-allow-credentials'), null);
    const tokens = (await accepted.json()) as { access_token: string; refresh_token: string };

    const refreshed = await post(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: spa.id },
      SPA,
    );
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.headers.get('access-control-allow-origin'), SPA);

    // Userinfo: readable from the client's origin only; without an Origin, no CORS at all.
    const userinfo = (origin?: string) =>
      fetch(`${server.issuer}/oauth2/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}`, ...(origin ? { origin } : {}) },
      });
    assert.equal((await userinfo(SPA)).headers.get('access-control-allow-origin'), SPA);
    assert.equal((await userinfo('https://evil.example')).headers.get('access-control-allow-origin'), null);
    assert.equal((await userinfo()).headers.get('access-control-allow-origin'), null);

    const revoke = await post(
      '/oauth2/revoke',
      { token: tokens.access_token, client_id: spa.id },
      'https://evil.example',
    );
    assert.equal(revoke.status, 400);
  });

  it('a confidential client reads answers only from the origins allowed with --allowed-origin', async () => {
    const c = server.clients.confidential;
    const exchangeFrom = async (origin: string) => {
      const issued = await getCode(server, c);
      const form = { grant_type: 'authorization_code', code: issued.code, redirect_uri: c.redirectUri };
      return post('/oauth2/token', form, origin, basic(c.id, c.secret!));
    };
    assert.equal(
      (await exchangeFrom('https://backoffice.example')).status,
      400,
      'a confidential client allows no origin by default',
    );
    const { lines, io } = cliIo(server);
    assert.equal(
      await run(['clients', 'update', c.id, '--allowed-origin', 'https://backoffice.example', '--json'], io),
      0,
    );
    const shown = JSON.parse(lines.join('\n')) as {
      allowed_origins: string[];
      cors_origins: string[];
      grant_types: string[];
    };
    assert.deepEqual(shown.allowed_origins, ['https://backoffice.example']);
    assert.deepEqual(shown.grant_types, ['authorization_code', 'refresh_token']);
    assert.equal(await run(['clients', 'update', c.id, '--allowed-origin', 'https://x.example/path'], io), 2);
    server.store.clearCaches();
    const allowed = await exchangeFrom('https://backoffice.example');
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://backoffice.example');
    assert.equal((await server.store.listEvents({ type: 'client.updated', limit: 1 }))[0]?.clientId, c.id);
  });

  it("a public client's refresh tokens end a day after the sign-in, a confidential client's do not", async () => {
    const spaTokens = (await (await exchange(server, await getCode(server, spa))).json()) as { refresh_token: string };
    const c = server.clients.confidential;
    const confidentialTokens = (await (await exchange(server, await getCode(server, c))).json()) as {
      refresh_token: string;
    };
    server.clock.offset += server.config.publicRefreshTokenAbsoluteTtl + 1;
    try {
      const spaRefresh = await post('/oauth2/token', {
        grant_type: 'refresh_token',
        refresh_token: spaTokens.refresh_token,
        client_id: spa.id,
      });
      assert.equal(spaRefresh.status, 400);
      assert.equal(
        ((await spaRefresh.json()) as { error_description: string }).error_description,
        'the refresh token has expired',
      );
      const other = await post(
        '/oauth2/token',
        { grant_type: 'refresh_token', refresh_token: confidentialTokens.refresh_token },
        undefined,
        basic(c.id, c.secret!),
      );
      assert.equal(other.status, 200);
    } finally {
      server.clock.offset -= server.config.publicRefreshTokenAbsoluteTtl + 1;
    }
  });
});
