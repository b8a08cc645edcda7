// How a sign-in is stated and asked for, over HTTP with openid-client as a relying party: amr and acr
// in the ID token and a refreshed one, acr_values_supported, acr_values asking for more than the
// user's factors can give, and max_age counting from the last factor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { ACR_VALUES } from '../../src/authn/levels.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const [SFA, MFA, PHR] = ACR_VALUES;

describe('authentication methods and levels (amr, acr, acr_values, max_age)', () => {
  let server: TestServer;
  let config: client.Configuration;
  before(async () => {
    server = await startServer();
    const c = server.clients.confidential;
    config = await client.discovery(new URL(server.issuer), c.id, c.secret!, client.ClientSecretBasic(c.secret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  after(() => server.close());

  /** An authorization request through `browser` (signing in on its login page when shown) to the client. */
  async function authorize(browser: BrowserSim, params: Record<string, string> = {}) {
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: server.clients.confidential.redirectUri,
      scope: 'openid',
      state,
      nonce,
      ...params,
    });
    const callback = await browser.authorize(url.href, server.user);
    return { callback, state, nonce };
  }

  async function tokensFor(browser: BrowserSim, params: Record<string, string> = {}, maxAge?: number) {
    const { callback, state, nonce } = await authorize(browser, params);
    return client.authorizationCodeGrant(config, callback, {
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
      ...(maxAge !== undefined ? { maxAge } : {}),
    });
  }

  it('discovery advertises the three levels, lowest first, and the amr and acr claims', async () => {
    const metadata = config.serverMetadata();
    assert.deepEqual(metadata.acr_values_supported, [
      'urn:tessera:acr:sfa',
      'urn:tessera:acr:mfa',
      'urn:tessera:acr:phr',
    ]);
    assert.ok(metadata.claims_supported!.includes('amr') && metadata.claims_supported!.includes('acr'));
  });

  it('a password sign-in says pwd and the first level, in the ID token and in a refreshed one', async () => {
    const tokens = await tokensFor(new BrowserSim(server.issuer));
    const claims = tokens.claims()!;
    assert.deepEqual(claims.amr, ['pwd']);
    assert.equal(claims.acr, SFA);
    const refreshed = (await client.refreshTokenGrant(config, tokens.refresh_token!)).claims()!;
    assert.deepEqual(refreshed.amr, ['pwd']);
    assert.equal(refreshed.acr, SFA);
    assert.equal(refreshed.auth_time, claims.auth_time);
    // The grant holds them for every later refresh: the rotation reads nothing else.
    const grantId = String(decodeJwt(tokens.access_token).grant_id);
    const db = await server.db();
    const grant = await db.selectFrom('grants').select(['amr', 'acr']).where('id', '=', grantId).executeTakeFirst();
    assert.deepEqual({ ...grant }, { amr: 'pwd', acr: SFA });
  });

  it('acr_values that the sign-in meets is answered with the value asked for', async () => {
    const tokens = await tokensFor(new BrowserSim(server.issuer), { acr_values: `${SFA} ${MFA}` });
    assert.equal(tokens.claims()!.acr, SFA);
  });

  it('acr_values asking two factors of a user who has one: unmet_authentication_requirements, signed in still', async () => {
    const browser = new BrowserSim(server.issuer);
    for (const acrValues of [MFA, PHR, `${PHR} ${MFA}`]) {
      const { callback, state } = await authorize(browser, { acr_values: acrValues });
      // The first time through the sign-in page; then from the session, at once: never a code.
      assert.equal(callback.searchParams.get('code'), null);
      await assert.rejects(
        client.authorizationCodeGrant(config, callback, { expectedState: state }),
        (err: client.AuthorizationResponseError) => {
          assert.equal(err.error, 'unmet_authentication_requirements');
          return true;
        },
      );
      assert.equal(callback.searchParams.get('iss'), server.issuer);
    }
    // The password was right: the browser is signed in, and a request asking no more gets a code at once.
    const tokens = await tokensFor(browser, { prompt: 'none' });
    assert.deepEqual(tokens.claims()!.amr, ['pwd']);
    // Without a page to step up on, a request asking more is login_required (OIDC Core §3.1.2.6).
    const { callback } = await authorize(browser, { acr_values: MFA, prompt: 'none' });
    assert.equal(callback.searchParams.get('error'), 'login_required');
  });

  it('max_age counts from the last factor: an older sign-in signs in again and auth_time moves on', async () => {
    const browser = new BrowserSim(server.issuer);
    server.clock.offset = -120;
    let first;
    try {
      first = (await tokensFor(browser, {}, undefined)).claims()!;
    } finally {
      server.clock.offset = 0;
    }
    // 120 s old: max_age=300 is met from the session, without a page; openid-client checks auth_time too.
    const within = (await tokensFor(browser, { max_age: '300', prompt: 'none' }, 300)).claims()!;
    assert.equal(within.auth_time, first.auth_time);
    // max_age=60 is not: prompt=none says so, and a request with a page signs in again.
    const none = await authorize(browser, { max_age: '60', prompt: 'none' });
    assert.equal(none.callback.searchParams.get('error'), 'login_required');
    const again = (await tokensFor(browser, { max_age: '60' }, 60)).claims()!;
    assert.ok(again.auth_time! >= first.auth_time! + 120, `${again.auth_time} after ${first.auth_time}`);
    assert.deepEqual(again.amr, ['pwd']);
  });
});
