// DPoP-bound access tokens where they are used (RFC 9449 §7): userinfo, and an API built on
// @tessera-oidc/server/resource, both called by openid-client with its DPoP handle; a wrong `ath`, a
// proof replayed or of another key, and a bound token presented as Bearer are refused with the
// DPoP scheme's challenge.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import * as client from 'openid-client';
import { BearerError, createVerifier } from '../../src/resource/index.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type DpopKey, dpopKey, dpopProof } from '../helpers/dpop.ts';
import { freePort, startServer, type TestServer } from '../helpers/server.ts';

/** An API that answers its caller's token claims, or the verifier's error and challenge. */
async function startApi(issuer: string): Promise<{ url: string; server: Server }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const verify = createVerifier({ issuer, audience: issuer });
  const server = createServer((request, response) => {
    const dpop = { proof: request.headers.dpop, method: request.method!, url: `${url}${request.url}` };
    verify(request.headers.authorization, { scopes: ['email'], dpop }).then(
      (token) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(token)),
      (err: unknown) => {
        if (!(err instanceof BearerError)) return response.writeHead(500).end();
        response.writeHead(err.status, { 'www-authenticate': err.wwwAuthenticate }).end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url, server };
}

describe('DPoP-bound tokens at userinfo and at an API', () => {
  let server: TestServer;
  let api: { url: string; server: Server };
  let config: client.Configuration;
  let DPoP: client.DPoPHandle;
  /** The handle's key, to sign proofs by hand. */
  let key: DpopKey;
  let accessToken: string;
  let userinfoUrl: string;
  before(async () => {
    server = await startServer();
    api = await startApi(server.issuer);
    userinfoUrl = `${server.issuer}/oauth2/userinfo`;
    const c = server.clients.public;
    config = await client.discovery(new URL(server.issuer), c.id, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    });
    const keyPair = await client.randomDPoPKeyPair('RS256');
    DPoP = client.getDPoPHandle(config, keyPair);
    const jwk = await exportJWK(keyPair.publicKey);
    key = { alg: 'RS256', privateKey: keyPair.privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: c.redirectUri,
      scope: 'openid email webhooks',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier }, undefined, {
      DPoP,
    });
    accessToken = tokens.access_token;
  });
  after(async () => {
    await new Promise((resolve) => api?.server.close(resolve));
    await server?.close();
  });

  /** GET `url` with `authorization` and, when given, a DPoP proof. */
  const call = (url: string, authorization: string, proof?: string) =>
    fetch(url, { headers: { authorization, ...(proof ? { dpop: proof } : {}) } });
  const challenge = (response: Response) => response.headers.get('www-authenticate') ?? '';

  it('openid-client: userinfo and the API with the DPoP handle', async () => {
    const claims = await client.fetchUserInfo(config, accessToken, server.user.id, { DPoP });
    assert.equal(claims.email, 'alice@example.com');
    const response = await client.fetchProtectedResource(
      config,
      accessToken,
      new URL(`${api.url}/items?page=2`),
      'GET',
      undefined,
      undefined,
      { DPoP },
    );
    assert.equal(response.status, 200);
    const token = (await response.json()) as { sub: string; cnf: { jkt: string } };
    assert.equal(token.sub, server.user.id);
    assert.equal(token.cnf.jkt, key.jkt);
  });

  it("Tessera's own Bearer APIs refuse a DPoP-bound token (RFC 9449 §7.2)", async () => {
    const response = await call(`${server.issuer}/api/webhooks`, `Bearer ${accessToken}`);
    assert.equal(response.status, 401);
    assert.match(challenge(response), /^DPoP .*error="invalid_token"/);
  });

  for (const [name, at] of [
    ['userinfo', () => userinfoUrl],
    ['the API', () => `${api.url}/items`],
  ] as const) {
    it(`${name}: a wrong ath, another key, no proof or a replayed proof is invalid_dpop_proof`, async () => {
      const url = at();
      const refused = async (response: Response) => {
        assert.equal(response.status, 401);
        assert.match(challenge(response), /^DPoP .*error="invalid_dpop_proof"/);
        assert.match(challenge(response), /algs="[^"]*ES256/);
      };
      await refused(await call(url, `DPoP ${accessToken}`, await dpopProof(key, 'GET', url, { accessToken: 'other' })));
      const other = await dpopKey();
      await refused(await call(url, `DPoP ${accessToken}`, await dpopProof(other, 'GET', url, { accessToken })));
      await refused(await call(url, `DPoP ${accessToken}`));
      const proof = await dpopProof(key, 'GET', url, { accessToken });
      assert.equal((await call(url, `DPoP ${accessToken}`, proof)).status, 200);
      await refused(await call(url, `DPoP ${accessToken}`, proof));
    });

    it(`${name}: a DPoP-bound token sent as Bearer is invalid_token, with the DPoP challenge`, async () => {
      const url = at();
      const response = await call(url, `Bearer ${accessToken}`);
      assert.equal(response.status, 401);
      assert.match(challenge(response), /^DPoP .*error="invalid_token"/);
      // A proof does not help a token sent under the wrong scheme.
      const withProof = await call(url, `Bearer ${accessToken}`, await dpopProof(key, 'GET', url, { accessToken }));
      assert.equal(withProof.status, 401);
    });
  }
});
