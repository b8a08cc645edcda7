// The token endpoint's rules: client authentication, the authorization_code and refresh_token
// grants, and RFC 6749 §5.2 error bodies with Cache-Control: no-store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { CodeSealer } from '../../src/oauth/codes.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

async function expectError(response: Response, status: number, error: string): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.error, error, JSON.stringify(body));
  assert.equal(typeof body.error_description, 'string');
  assert.equal(body.access_token, undefined);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.match(response.headers.get('content-type')!, /^application\/json/);
  return body;
}

async function userinfoStatus(server: TestServer, accessToken: string): Promise<number> {
  return (await fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }))
    .status;
}

describe('POST /oauth2/token', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  describe('client authentication', () => {
    it('client_secret_basic with form-urlencoded credentials', async () => {
      const issued = await getCode(server, server.clients.confidential);
      const response = await exchange(server, issued);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
    });

    it('client_secret_post', async () => {
      const c = server.clients.post;
      const issued = await getCode(server, c);
      const response = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code: issued.code,
        redirect_uri: c.redirectUri,
        client_id: c.id,
        client_secret: c.secret!,
      });
      assert.equal(response.status, 200);
    });

    it('wrong secret → 401 invalid_client with WWW-Authenticate, and the code still works', async () => {
      const c = server.clients.confidential;
      const issued = await getCode(server, c);
      const response = await tokenRequest(
        server,
        { grant_type: 'authorization_code', code: issued.code, redirect_uri: c.redirectUri },
        basic(c.id, 'wrong'),
      );
      await expectError(response, 401, 'invalid_client');
      assert.match(response.headers.get('www-authenticate')!, /^Basic realm=/);
      assert.equal((await exchange(server, issued)).status, 200);
    });

    it('unknown client → 401 invalid_client', async () => {
      const response = await tokenRequest(
        server,
        { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://x' },
        basic('nobody', 'secret'),
      );
      await expectError(response, 401, 'invalid_client');
    });

    it('no client authentication at all → 401 invalid_client', async () => {
      const response = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: 'https://x',
      });
      await expectError(response, 401, 'invalid_client');
      assert.ok(response.headers.get('www-authenticate'));
    });

    it('malformed Basic credentials → 401 invalid_client', async () => {
      await expectError(
        await tokenRequest(server, { grant_type: 'authorization_code' }, 'Basic !!!'),
        401,
        'invalid_client',
      );
      await expectError(
        await tokenRequest(
          server,
          { grant_type: 'authorization_code' },
          `Basic ${Buffer.from('nocolon').toString('base64')}`,
        ),
        401,
        'invalid_client',
      );
    });

    it('Basic and client_secret in the body at once → invalid_request', async () => {
      const c = server.clients.confidential;
      const response = await tokenRequest(
        server,
        { grant_type: 'authorization_code', code: 'x', redirect_uri: c.redirectUri, client_secret: c.secret! },
        basic(c.id, c.secret!),
      );
      await expectError(response, 400, 'invalid_request');
    });

    it('a confidential client cannot skip its secret (method none) → invalid_client', async () => {
      const c = server.clients.confidential;
      const response = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: c.redirectUri,
        client_id: c.id,
      });
      await expectError(response, 401, 'invalid_client');
    });

    it('a client registered for basic cannot use client_secret_post → invalid_client', async () => {
      const c = server.clients.confidential;
      const response = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code: 'x',
        redirect_uri: c.redirectUri,
        client_id: c.id,
        client_secret: c.secret!,
      });
      await expectError(response, 401, 'invalid_client');
    });
  });

  describe('request errors', () => {
    const auth = () => basic(server.clients.confidential.id, server.clients.confidential.secret!);
    it('missing grant_type → invalid_request', async () => {
      await expectError(await tokenRequest(server, { code: 'x' }, auth()), 400, 'invalid_request');
    });
    it('unknown grant_type → unsupported_grant_type', async () => {
      await expectError(
        await tokenRequest(server, { grant_type: 'password', username: 'a', password: 'b' }, auth()),
        400,
        'unsupported_grant_type',
      );
    });
    it('a grant the client is not registered for → unauthorized_client', async () => {
      const db = await server.db();
      await db
        .updateTable('clients')
        .set({ grant_types: '["authorization_code"]' })
        .where('client_id', '=', server.clients.post.id)
        .execute();
      server.store.clearCaches();
      try {
        const c = server.clients.post;
        await expectError(
          await tokenRequest(server, {
            grant_type: 'refresh_token',
            refresh_token: 'x',
            client_id: c.id,
            client_secret: c.secret!,
          }),
          400,
          'unauthorized_client',
        );
      } finally {
        await db
          .updateTable('clients')
          .set({ grant_types: '["authorization_code","refresh_token"]' })
          .where('client_id', '=', server.clients.post.id)
          .execute();
        server.store.clearCaches();
      }
    });
    it('a repeated parameter → invalid_request', async () => {
      const response = await fetch(`${server.issuer}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth() },
        body: 'grant_type=authorization_code&code=a&code=b&redirect_uri=x',
      });
      await expectError(response, 400, 'invalid_request');
    });
    it('a JSON body → invalid_request, not a 500', async () => {
      const response = await fetch(`${server.issuer}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth() },
        body: '{"grant_type":"authorization_code"}',
      });
      const body = (await response.json()) as Record<string, unknown>;
      assert.ok(response.status === 400 || response.status === 415);
      assert.equal(body.error, 'invalid_request');
    });
    it('missing code or redirect_uri → invalid_request', async () => {
      const c = server.clients.confidential;
      await expectError(
        await tokenRequest(server, { grant_type: 'authorization_code', redirect_uri: c.redirectUri }, auth()),
        400,
        'invalid_request',
      );
      await expectError(
        await tokenRequest(server, { grant_type: 'authorization_code', code: 'x' }, auth()),
        400,
        'invalid_request',
      );
    });
  });

  describe('authorization_code', () => {
    it('unknown code → invalid_grant', async () => {
      const c = server.clients.confidential;
      await expectError(
        await tokenRequest(
          server,
          { grant_type: 'authorization_code', code: 'nope', redirect_uri: c.redirectUri },
          basic(c.id, c.secret!),
        ),
        400,
        'invalid_grant',
      );
    });

    it('expired code (60 s) → invalid_grant', async () => {
      const issued = await getCode(server, server.clients.confidential);
      server.clock.offset += 61;
      try {
        await expectError(await exchange(server, issued), 400, 'invalid_grant');
      } finally {
        server.clock.offset -= 61;
      }
    });

    it('code issued to another client → invalid_grant', async () => {
      const issued = await getCode(server, server.clients.confidential);
      const other = server.clients.es256;
      const response = await tokenRequest(
        server,
        { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.client.redirectUri },
        basic(other.id, other.secret!),
      );
      await expectError(response, 400, 'invalid_grant');
    });

    it('another redirect_uri → invalid_grant', async () => {
      const issued = await getCode(server, server.clients.confidential);
      await expectError(
        await exchange(server, issued, { redirect_uri: 'http://127.0.0.1/other' }),
        400,
        'invalid_grant',
      );
    });

    it('PKCE: wrong verifier, missing verifier, verifier without challenge → invalid_grant; malformed → invalid_request', async () => {
      const pub = await getCode(server, server.clients.public);
      await expectError(await exchange(server, pub, { code_verifier: 'w'.repeat(43) }), 400, 'invalid_grant');
      const c = server.clients.public;
      const noVerifier = await getCode(server, c);
      await expectError(
        await tokenRequest(server, {
          grant_type: 'authorization_code',
          code: noVerifier.code,
          redirect_uri: c.redirectUri,
          client_id: c.id,
        }),
        400,
        'invalid_grant',
      );
      await expectError(await exchange(server, pub, { code_verifier: 'short' }), 400, 'invalid_request');
      const conf = await getCode(server, server.clients.confidential, { pkce: false });
      await expectError(await exchange(server, conf, { code_verifier: 'v'.repeat(43) }), 400, 'invalid_grant');
      // Confidential client with PKCE: verified too.
      const confPkce = await getCode(server, server.clients.confidential, { pkce: true });
      await expectError(await exchange(server, { ...confPkce, verifier: 'x'.repeat(43) }), 400, 'invalid_grant');
    });

    it('a second use → invalid_grant, and every token issued from the code is revoked', async () => {
      const issued = await getCode(server, server.clients.confidential);
      const first = await exchange(server, issued);
      assert.equal(first.status, 200);
      const tokens = (await first.json()) as { access_token: string; refresh_token: string };
      assert.equal(await userinfoStatus(server, tokens.access_token), 200);
      await expectError(await exchange(server, issued), 400, 'invalid_grant');
      const c = server.clients.confidential;
      await expectError(
        await tokenRequest(
          server,
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
          basic(c.id, c.secret!),
        ),
        400,
        'invalid_grant',
      );
      assert.equal(await userinfoStatus(server, tokens.access_token), 401);
    });

    it('a code is sealed: issuing it stores nothing, redeeming it creates the grant under its id once; it does not show whose it is', async () => {
      const db = await server.db();
      const count = async (table: 'grants') =>
        Number((await db.selectFrom(table).select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      const before = await count('grants');
      const issued = await getCode(server, server.clients.confidential);
      assert.equal(await count('grants'), before);
      assert.doesNotMatch(Buffer.from(issued.code, 'base64url').toString('latin1'), new RegExp(server.user.id));
      assert.equal((await exchange(server, issued)).status, 200);
      assert.equal(await count('grants'), before + 1);
      const id = new CodeSealer(server.secret).open(issued.code, Math.floor(Date.now() / 1000))!.id;
      const row = await db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.user_id, server.user.id);
      assert.equal(row.revoked_at, null);
      await expectError(await exchange(server, issued), 400, 'invalid_grant');
      assert.equal(await count('grants'), before + 1);
      assert.notEqual(
        (await db.selectFrom('grants').select('revoked_at').where('id', '=', id).executeTakeFirstOrThrow()).revoked_at,
        null,
      );
    });

    it('a code sealed under another TESSERA_SECRET → invalid_grant; under this one, it is honoured', async () => {
      const c = server.clients.confidential;
      const fields = {
        clientId: c.id,
        userId: server.user.id,
        redirectUri: c.redirectUri,
        scope: 'openid',
        codeChallenge: null,
        codeChallengeMethod: null,
        nonce: null,
        claims: {},
        resource: null,
        amr: [],
        acr: null,
        authTime: server.clock.offset + Math.floor(Date.now() / 1000),
      };
      const now = fields.authTime;
      const forged = new CodeSealer('another secret of at least 32 chars!').issue(fields, now, 60);
      const body = await expectError(
        await exchange(server, { code: forged, verifier: null, client: c }),
        400,
        'invalid_grant',
      );
      assert.equal(body.error_description, 'the authorization code is invalid');
      const genuine = new CodeSealer(server.secret).issue(fields, now, 60);
      assert.equal((await exchange(server, { code: genuine, verifier: null, client: c })).status, 200);
    });

    it('a redeemed code presented again after it expired → "already used", and its tokens are revoked', async () => {
      const c = server.clients.confidential;
      const issued = await getCode(server, c);
      const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
      server.clock.offset += 61;
      try {
        const body = await expectError(await exchange(server, issued), 400, 'invalid_grant');
        assert.equal(body.error_description, 'the authorization code has already been used');
      } finally {
        server.clock.offset -= 61;
      }
      const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
      await expectError(await tokenRequest(server, refresh, basic(c.id, c.secret!)), 400, 'invalid_grant');
    });

    it('a redeemed code presented by another client is invalid and revokes nothing', async () => {
      const c = server.clients.confidential;
      const issued = await getCode(server, c);
      const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
      const other = basic(server.clients.es256.id, server.clients.es256.secret!);
      const form = { grant_type: 'authorization_code', code: issued.code, redirect_uri: c.redirectUri };
      const body = await expectError(await tokenRequest(server, form, other), 400, 'invalid_grant');
      assert.equal(body.error_description, 'the authorization code is invalid');
      const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
      assert.equal((await tokenRequest(server, refresh, basic(c.id, c.secret!))).status, 200);
    });

    it('concurrent exchanges of one code: exactly one succeeds', async () => {
      const issued = await getCode(server, server.clients.confidential);
      const responses = await Promise.all(Array.from({ length: 8 }, () => exchange(server, issued)));
      assert.equal(responses.filter((r) => r.status === 200).length, 1);
      assert.equal(responses.filter((r) => r.status === 400).length, 7);
    });

    it('a user disabled after the code was issued → invalid_grant, and the code is not used up', async () => {
      const issued = await getCode(server, server.clients.confidential);
      const id = new CodeSealer(server.secret).open(issued.code, Math.floor(Date.now() / 1000))!.id;
      const now = Math.floor(Date.now() / 1000) + server.clock.offset;
      await server.store.setUserDisabled(server.user.id, true, now);
      try {
        const body = await expectError(await exchange(server, issued), 400, 'invalid_grant');
        assert.equal(body.error_description, 'the user is no longer active');
        assert.equal(await server.store.getGrant(id), undefined);
      } finally {
        await server.store.setUserDisabled(server.user.id, false, now);
      }
      assert.equal((await exchange(server, issued)).status, 200);
    });

    it('the ID token carries the claims the scopes release, as the user was at the authorization request', async () => {
      const issued = await getCode(server, server.clients.confidential, { scope: 'openid profile email' });
      const now = Math.floor(Date.now() / 1000) + server.clock.offset;
      const before = (await server.store.getUserById(server.user.id))!;
      await server.store.setUserDisabled(server.user.id, false, now + 7); // changes updated_at only
      const body = (await (await exchange(server, issued)).json()) as { id_token: string };
      const claims = decodeJwt(body.id_token);
      assert.equal(claims.email, 'alice@example.com');
      assert.equal(claims.email_verified, true);
      assert.equal(claims.preferred_username, 'alice');
      assert.equal(claims.updated_at, before.updatedAt);
      assert.notEqual((await server.store.getUserById(server.user.id))!.updatedAt, before.updatedAt);
    });

    it('the token response has exactly the RFC 6749 / OIDC fields; nonce and auth_time in the ID token', async () => {
      const issued = await getCode(server, server.clients.confidential, {
        nonce: 'n-0S6_WzA2Mj',
        scope: 'openid apps',
      });
      const response = await exchange(server, issued);
      const body = (await response.json()) as Record<string, string | number>;
      assert.deepEqual(Object.keys(body).sort(), [
        'access_token',
        'expires_in',
        'id_token',
        'refresh_token',
        'scope',
        'token_type',
      ]);
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 86400);
      assert.equal(body.scope, 'openid apps');
      const idToken = decodeJwt(body.id_token as string);
      assert.equal(idToken.nonce, 'n-0S6_WzA2Mj');
      assert.equal(idToken.aud, server.clients.confidential.id);
      assert.equal(idToken.iss, server.issuer);
      assert.ok(typeof idToken.auth_time === 'number');
      assert.equal(idToken.email, undefined);
    });

    it('without openid there is no ID token', async () => {
      const issued = await getCode(server, server.clients.confidential, { scope: 'apps webhooks' });
      const body = (await (await exchange(server, issued)).json()) as Record<string, unknown>;
      assert.equal(body.id_token, undefined);
      assert.equal(body.scope, 'apps webhooks');
    });

    it('a client registered for ES256 gets ES256 tokens', async () => {
      const issued = await getCode(server, server.clients.es256);
      const body = (await (await exchange(server, issued)).json()) as Record<string, string>;
      const header = JSON.parse(Buffer.from(body.id_token!.split('.')[0]!, 'base64url').toString());
      assert.equal(header.alg, 'ES256');
    });
  });

  describe('refresh_token', () => {
    async function tokensFor(scope = 'openid profile email') {
      const issued = await getCode(server, server.clients.confidential, { scope, nonce: 'abc' });
      return (await (await exchange(server, issued)).json()) as {
        access_token: string;
        refresh_token: string;
        id_token: string;
      };
    }
    const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
      tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
        basic(server.clients.confidential.id, server.clients.confidential.secret!),
      );

    it('rotates; a rotated token → invalid_grant and the whole family is revoked', async () => {
      const tokens = await tokensFor();
      const second = (await (await refresh(tokens.refresh_token)).json()) as {
        refresh_token: string;
        access_token: string;
      };
      assert.notEqual(second.refresh_token, tokens.refresh_token);
      await expectError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
      await expectError(await refresh(second.refresh_token), 400, 'invalid_grant');
      assert.equal(await userinfoStatus(server, second.access_token), 401);
    });

    it('the scope may be narrowed, never widened', async () => {
      const tokens = await tokensFor('openid profile');
      await expectError(await refresh(tokens.refresh_token, { scope: 'openid profile email' }), 400, 'invalid_scope');
      const narrowed = (await (await refresh(tokens.refresh_token, { scope: 'openid' })).json()) as {
        scope: string;
        refresh_token: string;
      };
      assert.equal(narrowed.scope, 'openid');
      // The family keeps the original grant: a later refresh may return to the full scope.
      const full = (await (await refresh(narrowed.refresh_token)).json()) as { scope: string };
      assert.equal(full.scope, 'openid profile');
    });

    it('the refreshed ID token keeps sub and auth_time and has no nonce', async () => {
      const tokens = await tokensFor();
      const before = decodeJwt(tokens.id_token);
      const after = decodeJwt(((await (await refresh(tokens.refresh_token)).json()) as { id_token: string }).id_token);
      assert.equal(after.sub, before.sub);
      assert.equal(after.auth_time, before.auth_time);
      assert.equal(before.nonce, 'abc');
      assert.equal(after.nonce, undefined);
    });

    it("unknown, expired, or another client's refresh token → invalid_grant; missing → invalid_request", async () => {
      await expectError(await refresh('nope'), 400, 'invalid_grant');
      const tokens = await tokensFor();
      const other = server.clients.es256;
      await expectError(
        await tokenRequest(
          server,
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
          basic(other.id, other.secret!),
        ),
        400,
        'invalid_grant',
      );
      server.clock.offset += 31 * 86400;
      try {
        await expectError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
      } finally {
        server.clock.offset -= 31 * 86400;
      }
      const missing = await tokenRequest(
        server,
        { grant_type: 'refresh_token' },
        basic(server.clients.confidential.id, server.clients.confidential.secret!),
      );
      await expectError(missing, 400, 'invalid_request');
    });

    it('concurrent refreshes with one token: exactly one succeeds', async () => {
      const tokens = await tokensFor();
      const responses = await Promise.all(Array.from({ length: 6 }, () => refresh(tokens.refresh_token)));
      assert.equal(responses.filter((r) => r.status === 200).length, 1);
    });

    it('a refresh token names its grant and generation under an HMAC: an altered one → invalid_grant, and revokes nothing', async () => {
      const tokens = await tokensFor();
      const { grant_id: grantId } = decodeJwt(tokens.access_token) as { grant_id: string };
      assert.match(tokens.refresh_token, new RegExp(`^${grantId}~1~[A-Za-z0-9_-]{43}$`));
      const mac = tokens.refresh_token.split('~')[2]!;
      for (const forged of [
        `${grantId}~2~${mac}`,
        `${grantId}~0~${mac}`,
        `${grantId}~1~${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
        `${grantId}~1`,
        '~~',
        `${'x'.repeat(5000)}~1~${mac}`,
      ]) {
        await expectError(await refresh(forged), 400, 'invalid_grant');
      }
      const second = (await (await refresh(tokens.refresh_token)).json()) as { refresh_token: string };
      assert.match(second.refresh_token, new RegExp(`^${grantId}~2~`));
    });

    it('a token rotated away generations ago is recognised as a replay and revokes the family', async () => {
      const first = await tokensFor();
      const second = (await (await refresh(first.refresh_token)).json()) as { refresh_token: string };
      const third = (await (await refresh(second.refresh_token)).json()) as {
        refresh_token: string;
        access_token: string;
      };
      const replay = await refresh(first.refresh_token);
      assert.deepEqual(await replay.json(), {
        error: 'invalid_grant',
        error_description: 'the refresh token has already been used',
      });
      await expectError(await refresh(third.refresh_token), 400, 'invalid_grant');
      assert.equal(await userinfoStatus(server, third.access_token), 401);
    });

    it('public clients refresh with their client_id', async () => {
      const c = server.clients.public;
      const issued = await getCode(server, c);
      const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string };
      const response = await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: c.id,
      });
      assert.equal(response.status, 200);
    });
  });
});
