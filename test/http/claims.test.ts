// Issue 42, claims: the standard claims of OIDC Core §5.1 set with `tessera users update`, released
// by the address and phone scopes, and the claims parameter (§5.5) through openid-client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { createClient } from '../../src/admin/clients.ts';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestClient, type TestServer } from '../helpers/server.ts';

const ADDRESS = { street_address: '2 Rabbit Hole', locality: 'Oxford', country: 'GB' };

describe('standard claims and the claims parameter', () => {
  let server: TestServer;
  let app: TestClient;
  let config: client.Configuration;

  before(async () => {
    server = await startServer();
    const redirectUri = `${server.issuer}/cb/claims`;
    const { client: registered, clientSecret } = await createClient(server.store, server.config, {
      name: 'Claims',
      redirectUris: [redirectUri],
      scopes: ['openid', 'profile', 'email', 'address', 'phone'],
      public: false,
    });
    app = { id: registered.clientId, secret: clientSecret, redirectUri, postLogoutRedirectUri: redirectUri };
    const auth = client.ClientSecretBasic(clientSecret!);
    config = await client.discovery(new URL(server.issuer), app.id, clientSecret!, auth, {
      execute: [client.allowInsecureRequests],
    });
    const { io, lines } = cliIo(server);
    const args = ['users', 'update', 'alice', '--nickname', 'Al', '--picture', 'https://example.com/alice.png'];
    args.push('--zoneinfo', 'Europe/London', '--locale', 'en-GB', '--birthdate', '1852-05-04');
    args.push('--phone-number', '+44 1865 000000', '--address', JSON.stringify(ADDRESS));
    assert.equal(await run(args, io), 0, lines.join('\n'));
  });
  after(() => server.close());

  async function signIn(parameters: Record<string, string>) {
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, nonce, ...parameters });
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    return client.authorizationCodeGrant(config, callback, { expectedNonce: nonce, idTokenExpected: true });
  }

  it('discovery offers the address and phone scopes, the claims and the claims parameter', () => {
    const metadata = config.serverMetadata();
    assert.equal(metadata.claims_parameter_supported, true);
    for (const scope of ['address', 'phone']) assert.ok(metadata.scopes_supported!.includes(scope), scope);
    for (const claim of ['picture', 'address', 'phone_number', 'phone_number_verified', 'birthdate'])
      assert.ok(metadata.claims_supported!.includes(claim), claim);
    assert.deepEqual(metadata.display_values_supported, ['page', 'popup', 'touch', 'wap']);
  });

  it('profile, address and phone, with essential name for the ID token and picture for userinfo', async () => {
    const claims = { id_token: { name: { essential: true } }, userinfo: { picture: null } };
    const tokens = await signIn({ scope: 'openid profile address phone', claims: JSON.stringify(claims) });
    const idToken = tokens.claims()!;
    assert.equal(idToken.name, 'Alice Liddell');
    assert.equal(idToken.nickname, 'Al');
    assert.deepEqual(idToken.address, ADDRESS);
    assert.equal(idToken.phone_number, '+441865000000');
    assert.equal(idToken.phone_number_verified, false);
    const info = await client.fetchUserInfo(config, tokens.access_token, server.user.id);
    assert.equal(info.picture, 'https://example.com/alice.png');
    assert.equal(info.zoneinfo, 'Europe/London');
    assert.equal(info.locale, 'en-GB');
    assert.equal(info.birthdate, '1852-05-04');
    assert.deepEqual(info.address, ADDRESS);
    // Claims the user does not have are left out, never empty.
    for (const absent of ['middle_name', 'website', 'gender', 'profile', 'email'])
      assert.equal(absent in info, false, absent);
  });

  it('the claims parameter alone: name in the ID token, picture and phone at userinfo only, kept on refresh', async () => {
    const claims = {
      id_token: { name: { essential: true }, acr: { values: ['urn:tessera:acr:sfa'] } },
      userinfo: { picture: null, phone_number: { essential: true }, unknown_claim: null },
    };
    const tokens = await signIn({ scope: 'openid', claims: JSON.stringify(claims) });
    assert.equal(tokens.scope, 'openid');
    const idToken = tokens.claims()!;
    assert.equal(idToken.name, 'Alice Liddell');
    assert.equal(idToken.acr, 'urn:tessera:acr:sfa');
    assert.equal('picture' in idToken, false);
    assert.equal('nickname' in idToken, false);
    const info = await client.fetchUserInfo(config, tokens.access_token, server.user.id);
    assert.deepEqual(info, {
      sub: server.user.id,
      picture: 'https://example.com/alice.png',
      phone_number: '+441865000000',
    });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.equal(refreshed.claims()!.name, 'Alice Liddell');
    assert.equal('picture' in refreshed.claims()!, false);
  });

  it('a claim under a scope the client is not registered for is not released', async () => {
    const narrow = server.clients.narrow;
    const narrowConfig = await client.discovery(
      new URL(server.issuer),
      narrow.id,
      narrow.secret!,
      client.ClientSecretBasic(narrow.secret!),
      { execute: [client.allowInsecureRequests] },
    );
    const claims = { userinfo: { phone_number: null, nickname: null } };
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(narrowConfig, {
      redirect_uri: narrow.redirectUri,
      scope: 'openid',
      nonce,
      claims: JSON.stringify(claims),
    });
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const tokens = await client.authorizationCodeGrant(narrowConfig, callback, { expectedNonce: nonce });
    const info = await client.fetchUserInfo(narrowConfig, tokens.access_token, server.user.id);
    assert.deepEqual(info, { sub: server.user.id, nickname: 'Al' });
  });

  it('acr asked with values in the claims parameter stands for acr_values (OIDC Core §5.5.1.1)', async () => {
    const browser = new BrowserSim(server.issuer);
    const first = client.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: 'openid' });
    await browser.authorize(first.href, server.user);
    const silently = async (acr: string) => {
      const claims = JSON.stringify({ id_token: { acr: { essential: true, values: [acr] } } });
      const parameters = { redirect_uri: app.redirectUri, scope: 'openid', prompt: 'none', claims };
      const response = await browser.request(client.buildAuthorizationUrl(config, parameters).href);
      return new URL(response.headers.get('location')!);
    };
    // The password session is enough for sfa; mfa needs a second factor, which prompt=none cannot ask.
    assert.ok((await silently('urn:tessera:acr:sfa')).searchParams.get('code'));
    assert.equal((await silently('urn:tessera:acr:mfa')).searchParams.get('error'), 'login_required');
  });

  for (const [what, parameters] of [
    ['claims that is not JSON', { claims: '{"id_token":' }],
    ['claims that is not an object', { claims: '[1]' }],
    ['a member that is not an object', { claims: '{"userinfo":"name"}' }],
    ['a claim asked with a string', { claims: '{"userinfo":{"name":"yes"}}' }],
    ['essential that is not a boolean', { claims: '{"userinfo":{"name":{"essential":"yes"}}}' }],
    ['an unknown display', { display: 'tv' }],
  ] as const) {
    it(`${what} is invalid_request at the redirect URI`, async () => {
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: app.redirectUri,
        scope: 'openid',
        state: 'x',
        ...parameters,
      });
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 302);
      const location = new URL(response.headers.get('location')!);
      assert.equal(location.searchParams.get('error'), 'invalid_request');
      assert.equal(location.searchParams.get('state'), 'x');
    });
  }

  it('display=popup is accepted; login_hint fills in the username on the sign-in page', async () => {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: 'openid',
      display: 'popup',
      login_hint: 'alice"<b>',
    });
    const browser = new BrowserSim(server.issuer);
    const response = await browser.request(url.href);
    assert.equal(response.status, 302);
    const page = await (await browser.request(response.headers.get('location')!)).text();
    assert.match(page, /id="username" name="username"[^>]*value="alice&quot;&lt;b&gt;"/);
  });
});
