// Revocation (RFC 7009) and introspection (RFC 7662), with openid-client for the happy paths and
// plain HTTP for the errors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

describe('revocation and introspection', () => {
  let server: TestServer;
  let rp: client.Configuration;
  let other: client.Configuration;
  before(async () => {
    server = await startServer();
    const options = { execute: [client.allowInsecureRequests] };
    const c = server.clients.confidential;
    rp = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), options);
    const o = server.clients.es256;
    other = await client.discovery(
      new URL(server.issuer),
      o.id,
      o.secret!,
      client.ClientSecretBasic(o.secret!),
      options,
    );
  });
  after(() => server.close());

  async function tokens(): Promise<Tokens> {
    return (await (await exchange(server, await getCode(server, server.clients.confidential))).json()) as Tokens;
  }
  const refresh = (refreshToken: string) =>
    tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: refreshToken },
      basic(server.clients.confidential.id, server.clients.confidential.secret!),
    );
  const userinfoStatus = async (accessToken: string) =>
    (await fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

  describe('introspection', () => {
    it('an active access token: active, scope, client_id, sub, exp, iat, iss, aud, token_type', async () => {
      const t = await tokens();
      const result = await client.tokenIntrospection(rp, t.access_token);
      assert.equal(result.active, true);
      assert.equal(result.scope, 'openid profile email');
      assert.equal(result.client_id, server.clients.confidential.id);
      assert.equal(result.sub, server.user.id);
      assert.equal(result.iss, server.issuer);
      assert.equal(result.aud, server.issuer);
      assert.equal(result.token_type, 'Bearer');
      assert.ok(typeof result.exp === 'number' && typeof result.iat === 'number');
    });

    it('an active refresh token, for the client it was issued to only', async () => {
      const t = await tokens();
      const mine = await client.tokenIntrospection(rp, t.refresh_token);
      assert.equal(mine.active, true);
      assert.equal(mine.token_type, 'refresh_token');
      assert.equal(mine.sub, server.user.id);
      assert.ok(typeof mine.iat === 'number' && typeof mine.exp === 'number' && mine.exp > mine.iat);
      assert.deepEqual({ ...(await client.tokenIntrospection(other, t.refresh_token)) }, { active: false });
    });

    it('another client (a resource server) may introspect access tokens', async () => {
      const t = await tokens();
      assert.equal((await client.tokenIntrospection(other, t.access_token)).active, true);
    });

    it('expired, unknown, malformed or rotated tokens: {"active": false} and nothing else', async () => {
      const t = await tokens();
      // The next generation's number under this token's MAC: a forgery.
      const forged = t.refresh_token.replace('~1~', '~2~');
      for (const token of ['unknown', 'a.b.c', 'eyJhbGciOiJub25lIn0.e30.', '', forged, `${t.refresh_token}x`]) {
        if (token === '') continue;
        assert.deepEqual({ ...(await client.tokenIntrospection(rp, token)) }, { active: false });
      }
      await refresh(t.refresh_token);
      assert.deepEqual({ ...(await client.tokenIntrospection(rp, t.refresh_token)) }, { active: false });
      server.clock.offset += 86_401;
      try {
        assert.deepEqual({ ...(await client.tokenIntrospection(rp, t.access_token)) }, { active: false });
      } finally {
        server.clock.offset -= 86_401;
      }
    });

    it('requires client authentication: 401 without, 401 for a public client', async () => {
      const t = await tokens();
      const anonymous = await fetch(`${server.issuer}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: t.access_token }),
      });
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as { error: string }).error, 'invalid_client');
      assert.ok(anonymous.headers.get('www-authenticate'));
      const pub = await fetch(`${server.issuer}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: t.access_token, client_id: server.clients.public.id }),
      });
      assert.equal(pub.status, 401);
    });

    it('missing token → invalid_request', async () => {
      const c = server.clients.confidential;
      const response = await fetch(`${server.issuer}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
        body: '',
      });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
    });
  });

  describe('revocation', () => {
    it('revoking a refresh token revokes its family and the access tokens of the grant', async () => {
      const t = await tokens();
      const rotated = (await (await refresh(t.refresh_token)).json()) as Tokens;
      await client.tokenRevocation(rp, rotated.refresh_token, { token_type_hint: 'refresh_token' });
      assert.equal((await refresh(rotated.refresh_token)).status, 400);
      assert.equal((await client.tokenIntrospection(rp, t.access_token)).active, false);
      assert.equal((await client.tokenIntrospection(rp, rotated.access_token)).active, false);
      assert.equal(await userinfoStatus(rotated.access_token), 401);
    });

    it('revoking an access token makes it inactive; the refresh token still works', async () => {
      const t = await tokens();
      // A wrong hint is a hint only.
      await client.tokenRevocation(rp, t.access_token, { token_type_hint: 'refresh_token' });
      assert.equal((await client.tokenIntrospection(rp, t.access_token)).active, false);
      assert.equal(await userinfoStatus(t.access_token), 401);
      assert.equal((await refresh(t.refresh_token)).status, 200);
    });

    it('unknown and already-revoked tokens answer 200', async () => {
      const t = await tokens();
      await client.tokenRevocation(rp, 'no-such-token');
      await client.tokenRevocation(rp, t.refresh_token);
      await client.tokenRevocation(rp, t.refresh_token);
      await client.tokenRevocation(rp, t.access_token);
      await client.tokenRevocation(rp, t.access_token);
    });

    it('a token issued to another client is refused and stays valid', async () => {
      const t = await tokens();
      for (const token of [t.access_token, t.refresh_token]) {
        const o = server.clients.es256;
        const response = await fetch(`${server.issuer}/oauth2/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(o.id, o.secret!) },
          body: new URLSearchParams({ token }),
        });
        assert.equal(response.status, 400);
        assert.equal(((await response.json()) as { error: string }).error, 'unauthorized_client');
        assert.equal(response.headers.get('cache-control'), 'no-store');
      }
      assert.equal((await client.tokenIntrospection(rp, t.access_token)).active, true);
      assert.equal((await client.tokenIntrospection(rp, t.refresh_token)).active, true);
    });

    it('client authentication as at the token endpoint: wrong secret → 401; public clients revoke with client_id', async () => {
      const c = server.clients.confidential;
      const bad = await fetch(`${server.issuer}/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, 'wrong') },
        body: new URLSearchParams({ token: 'x' }),
      });
      assert.equal(bad.status, 401);
      assert.match(bad.headers.get('www-authenticate')!, /Basic/);

      const p = server.clients.public;
      const pt = (await (await exchange(server, await getCode(server, p))).json()) as Tokens;
      const ok = await fetch(`${server.issuer}/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: pt.refresh_token, client_id: p.id }),
      });
      assert.equal(ok.status, 200);
      const again = await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: pt.refresh_token,
        client_id: p.id,
      });
      assert.equal(again.status, 400);
    });

    it('missing token → invalid_request', async () => {
      const c = server.clients.confidential;
      const response = await fetch(`${server.issuer}/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
        body: '',
      });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: string }).error, 'invalid_request');
    });
  });

  it('discovery advertises the revocation, introspection and end-session endpoints', async () => {
    const metadata = rp.serverMetadata();
    assert.equal(metadata.revocation_endpoint, `${server.issuer}/oauth2/revoke`);
    assert.equal(metadata.introspection_endpoint, `${server.issuer}/oauth2/introspect`);
    assert.equal(metadata.end_session_endpoint, `${server.issuer}/oauth2/logout`);
  });
});
