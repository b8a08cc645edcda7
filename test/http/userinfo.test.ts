import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, generateKeyPair } from 'jose';
import { startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

describe('GET and POST /oauth2/userinfo', () => {
  let server: TestServer;
  let accessToken: string;
  before(async () => {
    server = await startServer();
    const issued = await getCode(server, server.clients.confidential, { scope: 'openid email' });
    accessToken = ((await (await exchange(server, issued)).json()) as { access_token: string }).access_token;
  });
  after(() => server.close());

  const call = (init: RequestInit = {}) => fetch(`${server.issuer}/oauth2/userinfo`, init);

  it('GET with a Bearer token returns the claims of the granted scopes', async () => {
    const response = await call({ headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await response.json(), { sub: server.user.id, email: 'alice@example.com', email_verified: true });
  });

  it('POST with the token in the form body (RFC 6750 §2.2)', async () => {
    const response = await call({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: accessToken }),
    });
    assert.equal(response.status, 200);
  });

  async function expectInvalidToken(response: Response): Promise<void> {
    assert.equal(response.status, 401);
    const challenge = response.headers.get('www-authenticate')!;
    assert.match(challenge, /^Bearer /);
    assert.match(challenge, /error="invalid_token"/);
  }

  it('missing token → 401 invalid_token', async () => expectInvalidToken(await call()));
  it('garbage token → 401 invalid_token', async () =>
    expectInvalidToken(await call({ headers: { authorization: 'Bearer abc.def.ghi' } })));
  it('tampered token → 401 invalid_token', async () => {
    const [h, p, s] = accessToken.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    payload.sub = 'someone-else';
    await expectInvalidToken(
      await call({
        headers: { authorization: `Bearer ${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}` },
      }),
    );
  });
  it('a token signed by another key → 401 invalid_token', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ scope: 'openid', client_id: 'x', grant_id: 'x' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: server.keys.signingKey('ES256').kid })
      .setIssuer(server.issuer)
      .setAudience(server.issuer)
      .setSubject(server.user.id)
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('j')
      .sign(privateKey);
    await expectInvalidToken(await call({ headers: { authorization: `Bearer ${forged}` } }));
  });
  it('an expired token → 401 invalid_token', async () => {
    server.clock.offset += 86_401;
    try {
      await expectInvalidToken(await call({ headers: { authorization: `Bearer ${accessToken}` } }));
    } finally {
      server.clock.offset -= 86_401;
    }
  });
  it('an ID token is not an access token → 401 invalid_token', async () => {
    const issued = await getCode(server, server.clients.confidential, { scope: 'openid' });
    const { id_token } = (await (await exchange(server, issued)).json()) as { id_token: string };
    await expectInvalidToken(await call({ headers: { authorization: `Bearer ${id_token}` } }));
  });
  it('a token without openid → 403 insufficient_scope', async () => {
    const issued = await getCode(server, server.clients.confidential, { scope: 'apps' });
    const { access_token } = (await (await exchange(server, issued)).json()) as { access_token: string };
    const response = await call({ headers: { authorization: `Bearer ${access_token}` } });
    assert.equal(response.status, 403);
    assert.match(response.headers.get('www-authenticate')!, /error="insufficient_scope"/);
  });
});
