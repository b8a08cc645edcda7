// RFC 6749 §4.4, without HTTP: the client_credentials grant called directly against a real store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidScope, UnauthorizedClient } from '../../../src/errors/index.ts';
import { clientCredentialsGrant } from '../../../src/oauth/grants/client-credentials.ts';
import { body, type Fixture, fixture, ISSUER, NOW, rejectsWith, type TestClient } from './fixture.ts';

let f: Fixture;
before(async () => {
  f = await fixture();
});
after(() => f.close());

const grant = (client: TestClient, fields: Record<string, string> = {}) =>
  clientCredentialsGrant.handle(f.ctx, client.client, body({ grant_type: 'client_credentials', ...fields }));

describe('client_credentials: a token for the client itself', () => {
  it('an access token whose subject is the client, with no refresh token and no ID token (§4.4.3)', async () => {
    const tokens = await grant(f.machine);
    assert.deepEqual(Object.keys(tokens).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.id_token, undefined);
    assert.equal(tokens.scope, 'apps');
    const access = decodeJwt(tokens.access_token);
    assert.equal(access.sub, f.machine.client.clientId);
    assert.equal(access.client_id, f.machine.client.clientId);
    assert.equal(access.aud, ISSUER);
    assert.equal(access.exp, NOW + tokens.expires_in);
  });

  it('the token names no grant: there is no family to refresh, nor a user', async () => {
    const access = decodeJwt((await grant(f.machine)).access_token);
    assert.equal(access.grant_id, undefined);
    assert.equal(access.auth_time, undefined);
  });
});

describe("client_credentials: scope limited to the client's", () => {
  it("without a scope, the client's registered API scopes, never the user scopes", async () => {
    // `confidential` is registered for openid profile email apps webhooks.
    assert.equal((await grant(f.confidential)).scope, 'apps webhooks');
  });

  it('a registered API scope is granted; narrowing works', async () => {
    assert.equal((await grant(f.confidential, { scope: 'webhooks' })).scope, 'webhooks');
    assert.equal((await grant(f.machine, { scope: 'apps' })).scope, 'apps');
  });

  it('a scope the client is not registered for is invalid_scope', async () => {
    await rejectsWith(grant(f.machine, { scope: 'apps webhooks' }), InvalidScope, 'invalid_scope', /registered/);
    await rejectsWith(grant(f.machine, { scope: 'unknown' }), InvalidScope, 'invalid_scope');
  });

  it('a user scope (openid, profile, email) is invalid_scope even for a client registered for it', async () => {
    for (const scope of ['openid', 'profile', 'email apps']) {
      await rejectsWith(grant(f.confidential, { scope }), InvalidScope, 'invalid_scope', /no user/);
    }
  });
});

describe('client_credentials: confidential clients only', () => {
  it('a public client is unauthorized_client', async () => {
    await rejectsWith(grant(f.public, { scope: 'apps' }), UnauthorizedClient, 'unauthorized_client', /public/);
  });
});
