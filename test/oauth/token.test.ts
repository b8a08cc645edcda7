// The token endpoint's domain code without HTTP (RFC 6749 §3.2, §5.2): client authentication first,
// then the grant_type picks the grant (the GRANTS map); a missing or unsupported one is refused with
// its §5.2 error code, as is a grant the client is not registered for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import {
  InvalidClient,
  InvalidRequest,
  InvalidTarget,
  UnauthorizedClient,
  UnsupportedGrantType,
} from '../../src/errors/index.ts';
import type { Params } from '../../src/oauth/params.ts';
import { SUPPORTED_GRANT_TYPES, tokenEndpoint } from '../../src/oauth/token.ts';
import { basic } from '../helpers/tokens.ts';
import { body, type Fixture, fixture, NOW, pkcePair, rejectsWith, type TestClient } from './grants/fixture.ts';

let f: Fixture;
before(async () => {
  f = await fixture();
});
after(() => f.close());

const auth = (client: TestClient) => basic(client.client.clientId, client.secret!);
const post = (client: TestClient, fields: Record<string, string>) => tokenEndpoint(f.ctx, auth(client), body(fields));
const codeFields = (client: TestClient, code = f.code(client)) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: client.redirectUri,
});

describe('token endpoint: grant_type (RFC 6749 §5.2)', () => {
  it('the grants are authorization_code, refresh_token, client_credentials, the device code, token exchange and jwt-bearer', () => {
    assert.deepEqual(SUPPORTED_GRANT_TYPES, [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ]);
  });

  it('a missing or empty grant_type is invalid_request', async () => {
    await rejectsWith(post(f.confidential, {}), InvalidRequest, 'invalid_request', /grant_type is required/);
    await rejectsWith(post(f.confidential, { grant_type: '' }), InvalidRequest, 'invalid_request', /grant_type/);
  });

  it('an unknown grant_type is unsupported_grant_type, naming those supported', async () => {
    for (const grantType of ['password', 'urn:ietf:params:oauth:grant-type:saml2-bearer', 'AUTHORIZATION_CODE']) {
      await rejectsWith(
        post(f.confidential, { grant_type: grantType }),
        UnsupportedGrantType,
        'unsupported_grant_type',
        /authorization_code, refresh_token, client_credentials, urn:ietf:params:oauth:grant-type:device_code/,
      );
    }
  });

  it('a grant the client is not registered for is unauthorized_client, and redeems nothing', async () => {
    await rejectsWith(
      post(f.confidential, { grant_type: 'client_credentials' }),
      UnauthorizedClient,
      'unauthorized_client',
      /client_credentials/,
    );
    // A code sealed for the client_credentials-only client (it has no redirect URI; the check comes first).
    const code = f.code(f.machine);
    await rejectsWith(post(f.machine, codeFields(f.machine, code)), UnauthorizedClient, 'unauthorized_client');
    assert.equal(await f.store.getGrant(f.ctx.codes.open(code, NOW)!.id), undefined);
  });
});

describe('token endpoint: dispatch to the grant', () => {
  it('authorization_code, then refresh_token, for a confidential client with Basic credentials', async () => {
    const code = f.code(f.confidential);
    const tokens = await post(f.confidential, codeFields(f.confidential, code));
    const grantId = f.ctx.codes.open(code, NOW)!.id;
    assert.equal(decodeJwt(tokens.access_token).grant_id, grantId);
    assert.ok(tokens.id_token);
    const refreshed = await post(f.confidential, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    assert.deepEqual(f.ctx.refreshTokens.parse(refreshed.refresh_token!), { grantId, generation: 2 });
  });

  it('client_credentials for a client registered for it', async () => {
    const tokens = await post(f.machine, { grant_type: 'client_credentials' });
    assert.equal(decodeJwt(tokens.access_token).sub, f.machine.client.clientId);
    assert.equal(tokens.refresh_token, undefined);
  });

  it('a public client identified by client_id alone', async () => {
    const { verifier, challenge } = pkcePair();
    const code = f.code(f.public, { codeChallenge: challenge, codeChallengeMethod: 'S256' });
    const fields = { ...codeFields(f.public, code), client_id: f.public.client.clientId, code_verifier: verifier };
    assert.ok((await tokenEndpoint(f.ctx, undefined, body(fields))).access_token);
  });
});

describe('token endpoint: before the grant', () => {
  it('a failed client authentication is invalid_client, whatever the grant_type', async () => {
    const wrong = basic(f.confidential.client.clientId, 'not-the-secret');
    for (const grantType of ['authorization_code', 'password']) {
      await rejectsWith(tokenEndpoint(f.ctx, wrong, body({ grant_type: grantType })), InvalidClient, 'invalid_client');
    }
    await rejectsWith(
      tokenEndpoint(f.ctx, undefined, body({ grant_type: 'password' })),
      InvalidClient,
      'invalid_client',
    );
  });

  it('a repeated parameter is invalid_request; a repeated resource invalid_target (RFC 8707 §2)', async () => {
    const fields = codeFields(f.confidential);
    const repeated: Params = new Map([...body(fields), ['grant_type', ['authorization_code', 'refresh_token']]]);
    await rejectsWith(tokenEndpoint(f.ctx, auth(f.confidential), repeated), InvalidRequest, 'invalid_request');
    const resources: Params = new Map([...body(fields), ['resource', ['https://a.example', 'https://b.example']]]);
    await rejectsWith(tokenEndpoint(f.ctx, auth(f.confidential), resources), InvalidTarget, 'invalid_target');
    // The code was not spent by either: it still works.
    assert.ok((await post(f.confidential, fields)).access_token);
  });

  it('a browser origin the client does not allow is invalid_request and redeems nothing', async () => {
    const fields = codeFields(f.confidential);
    await rejectsWith(
      tokenEndpoint(f.ctx, auth(f.confidential), body(fields), undefined, 'https://evil.example'),
      InvalidRequest,
      'invalid_request',
      /Origin/,
    );
    assert.ok((await post(f.confidential, fields)).access_token);
  });
});
