// The authorization code flow driven by openid-client, in both variants; shared by the SQLite and
// PostgreSQL runs.
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { BrowserSim } from '../helpers/browser-sim.ts';
import type { TestServer } from '../helpers/server.ts';

async function discover(
  server: TestServer,
  clientId: string,
  auth: client.ClientAuth,
  secret?: string,
): Promise<client.Configuration> {
  return client.discovery(new URL(server.issuer), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

export async function confidentialFlowWithOpenidClient(server: TestServer): Promise<void> {
  const c = server.clients.confidential;
  const config = await discover(server, c.id, client.ClientSecretBasic(c.secret!), c.secret!);
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: c.redirectUri,
    scope: 'openid profile email apps',
    state,
    nonce,
    prompt: 'login',
  });
  const browser = new BrowserSim(server.issuer);
  const callback = await browser.authorize(url.href, server.user);
  assert.equal(callback.searchParams.get('iss'), server.issuer);

  const tokens = await client.authorizationCodeGrant(config, callback, {
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  assert.equal(tokens.expires_in, 86400);
  assert.equal(tokens.scope, 'openid profile email apps');
  assert.ok(tokens.refresh_token && tokens.refresh_token.length >= 43);
  assert.deepEqual(Object.keys(tokens).sort(), [
    'access_token',
    'expires_in',
    'id_token',
    'refresh_token',
    'scope',
    'token_type',
  ]);

  const header = decodeProtectedHeader(tokens.access_token);
  assert.equal(header.typ, 'at+jwt');
  const at = decodeJwt(tokens.access_token);
  assert.equal(at.iss, server.issuer);
  assert.equal(at.sub, server.user.id);
  assert.equal(at.aud, server.issuer);
  assert.equal(at.client_id, c.id);
  assert.equal(at.scope, 'openid profile email apps');
  for (const claim of ['iat', 'exp', 'jti']) assert.ok(at[claim], `access token has ${claim}`);

  const claims = tokens.claims()!;
  assert.equal(claims.sub, server.user.id);
  assert.equal(claims.nonce, nonce);
  assert.equal(claims.aud, c.id);
  assert.ok(typeof claims.auth_time === 'number');
  assert.ok(typeof claims.at_hash === 'string');
  // How the user signed in (RFC 8176) and the level reached (src/authn/levels.ts).
  assert.deepEqual(claims.amr, ['pwd']);
  assert.equal(claims.acr, 'urn:tessera:acr:sfa');
  assert.equal(claims.name, 'Alice Liddell');
  assert.equal(claims.email, 'alice@example.com');
  assert.equal(claims.email_verified, true);
  assert.equal(claims.preferred_username, 'alice');

  const info = await client.fetchUserInfo(config, tokens.access_token, server.user.id);
  assert.equal(info.email, 'alice@example.com');
  assert.equal(info.given_name, 'Alice');
  assert.equal(info.family_name, 'Liddell');

  // Refresh: rotation, narrowed scope, the ID token keeps sub, auth_time, amr and acr and has no nonce.
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid profile' });
  assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
  assert.equal(refreshed.scope, 'openid profile');
  const refreshedClaims = refreshed.claims()!;
  assert.equal(refreshedClaims.sub, claims.sub);
  assert.equal(refreshedClaims.auth_time, claims.auth_time);
  assert.deepEqual(refreshedClaims.amr, claims.amr);
  assert.equal(refreshedClaims.acr, claims.acr);
  assert.equal(refreshedClaims.nonce, undefined);
  assert.equal(refreshedClaims.email, undefined);
}

export async function publicFlowWithOpenidClient(server: TestServer): Promise<void> {
  const c = server.clients.public;
  const config = await discover(server, c.id, client.None());
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: c.redirectUri,
    scope: 'openid profile',
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const browser = new BrowserSim(server.issuer);
  const callback = await browser.authorize(url.href, server.user);
  const tokens = await client.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    idTokenExpected: true,
  });
  assert.equal(tokens.scope, 'openid profile');
  assert.equal(tokens.claims()!.preferred_username, 'alice');
  assert.equal(tokens.claims()!.email, undefined);
  const info = await client.fetchUserInfo(config, tokens.access_token, server.user.id);
  assert.equal(info.preferred_username, 'alice');
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
  assert.equal(refreshed.scope, 'openid profile');
}
