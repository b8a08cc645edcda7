// Both variants with oauth4webapi: RFC 9207 `iss` validation of the authorization response and
// RFC 9068 validation of the JWT access token.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const insecure = { [oauth.allowInsecureRequests]: true };

describe('authorization code flow with oauth4webapi', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  before(async () => {
    server = await startServer();
    const issuer = new URL(server.issuer);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  after(() => server.close());

  async function run(variant: 'confidential' | 'public'): Promise<void> {
    const registered = server.clients[variant];
    const client: oauth.Client = { client_id: registered.id };
    const clientAuth = variant === 'confidential' ? oauth.ClientSecretBasic(registered.secret!) : oauth.None();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: registered.id,
      redirect_uri: registered.redirectUri,
      response_type: 'code',
      scope: 'openid email apps webhooks',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      registered.redirectUri,
      verifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    assert.equal(result.scope, 'openid email apps webhooks');
    assert.equal(result.expires_in, 86400);
    assert.equal(oauth.getValidatedIdTokenClaims(result)?.email, 'alice@example.com');

    const apiRequest = new Request('http://127.0.0.1/apps', {
      headers: { authorization: `Bearer ${result.access_token}` },
    });
    const claims = await oauth.validateJwtAccessToken(as, apiRequest, server.issuer, insecure);
    assert.equal(claims.sub, server.user.id);
    assert.equal(claims.client_id, registered.id);
    assert.equal(claims.scope, 'openid email apps webhooks');
  }

  it('confidential client (HTTP Basic, with PKCE): iss validated, JWT access token validated', () =>
    run('confidential'));
  it('public client (PKCE S256): iss validated, JWT access token validated', () => run('public'));

  it('an authorization response from another issuer is refused by the client', async () => {
    const callback = new URL(
      `${server.clients.public.redirectUri}?code=x&state=s&iss=${encodeURIComponent('https://evil.example')}`,
    );
    assert.throws(() => oauth.validateAuthResponse(as, { client_id: server.clients.public.id }, callback, 's'));
  });
});
