import assert from 'node:assert/strict';
import { CLI } from '../../src/events/index.ts';
import { rotateKey } from '../../src/tokens/key-rotation.ts';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('discovery, JWKS, health and metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    it(`${path} is complete and truthful`, async () => {
      const response = await fetch(`${server.issuer}${path}`);
      assert.equal(response.status, 200);
      const metadata = (await response.json()) as Record<string, unknown>;
      assert.equal(metadata.issuer, server.issuer);
      assert.equal(metadata.authorization_endpoint, `${server.issuer}/oauth2/authorize`);
      assert.equal(metadata.token_endpoint, `${server.issuer}/oauth2/token`);
      assert.equal(metadata.userinfo_endpoint, `${server.issuer}/oauth2/userinfo`);
      assert.equal(metadata.jwks_uri, `${server.issuer}/oauth2/jwks`);
      assert.deepEqual(metadata.response_types_supported, ['code']);
      assert.deepEqual(metadata.grant_types_supported, [
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
        'urn:ietf:params:oauth:grant-type:token-exchange',
        'urn:ietf:params:oauth:grant-type:jwt-bearer',
      ]);
      assert.deepEqual(metadata.authorization_grant_profiles_supported, ['urn:ietf:params:oauth:grant-profile:id-jag']);
      assert.deepEqual(metadata.identity_chaining_requested_token_types_supported, [
        'urn:ietf:params:oauth:token-type:id-jag',
      ]);
      assert.equal(metadata.device_authorization_endpoint, `${server.issuer}/oauth2/device_authorization`);
      assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(metadata.token_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'client_secret_jwt',
        'private_key_jwt',
        'none',
      ]);
      assert.ok((metadata.token_endpoint_auth_signing_alg_values_supported as string[]).includes('ES256'));
      assert.ok((metadata.token_endpoint_auth_signing_alg_values_supported as string[]).includes('HS256'));
      assert.deepEqual(metadata.id_token_signing_alg_values_supported, ['RS256', 'ES256']);
      assert.equal(metadata.authorization_response_iss_parameter_supported, true);
      assert.deepEqual(metadata.scopes_supported, [
        'openid',
        'profile',
        'email',
        'address',
        'phone',
        'roles',
        'apps',
        'webhooks',
      ]);
      assert.equal(metadata.request_parameter_supported, true);
      assert.equal(metadata.request_uri_parameter_supported, false);
    });
  }

  it('/oauth2/jwks publishes RS256 and ES256 public keys only, with kids', async () => {
    const response = await fetch(`${server.issuer}/oauth2/jwks`);
    assert.equal(response.status, 200);
    const { keys } = (await response.json()) as { keys: Array<Record<string, string>> };
    assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
    for (const key of keys) {
      assert.ok(key.kid);
      assert.equal(key.use, 'sig');
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi'])
        assert.equal(key[secret], undefined, `no private member ${secret}`);
    }
  });

  it('a staged key is published before it signs; after --now the new one signs, the old one still published', async () => {
    const before = server.keys.signingKey('ES256').kid;
    const staged = await rotateKey(server.keys, 'ES256', { requester: CLI });
    assert.equal(server.keys.signingKey('ES256').kid, before);
    const published = (await (await fetch(`${server.issuer}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> };
    assert.ok(published.keys.some((k) => k.kid === staged.kid));
    const { kid } = await rotateKey(server.keys, 'ES256', { emergency: true, requester: CLI });
    assert.equal(kid, staged.kid);
    assert.notEqual(kid, before);
    assert.equal(server.keys.signingKey('ES256').kid, kid);
    const { keys } = (await (await fetch(`${server.issuer}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> };
    assert.ok(keys.some((k) => k.kid === before));
    assert.ok(keys.some((k) => k.kid === kid));
  });

  it('/healthz, /readyz, /metrics', async () => {
    assert.equal((await fetch(`${server.issuer}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.issuer}/readyz`)).status, 200);
    const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
    assert.match(metrics, /tessera_http_requests_total\{route="\/readyz",method="GET",status="200"\} 1/);
    assert.match(metrics, /^tessera_signing_key_age_seconds\{alg="ES256"\} \d+$/m);
    assert.match(metrics, /^tessera_ready 1$/m);
    assert.match(metrics, /^tessera_database_connections\{state="open"\} 2$/m);
    assert.match(metrics, /^tessera_database_faults_total 0$/m);
  });

  it('unknown routes → 404 JSON', async () => {
    const response = await fetch(`${server.issuer}/nope`);
    assert.equal(response.status, 404);
  });
});
