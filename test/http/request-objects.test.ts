// Request objects by value (RFC 9101, OIDC Core §6.1): openid-client's buildAuthorizationUrlWithJAR
// through sign-in to tokens, the object's parameters taking precedence over the query's; oauth4webapi's
// issueRequestObject pushed to /oauth2/par; an unsigned object refused unless the client is registered
// for `none`; a wrong key, another client_id, an aud for someone else refused (invalid_request_object).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1/jar-cb';

describe('request objects', () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  let clientId: string;
  let secret: string;

  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    const { lines, io } = cliIo(server);
    assert.equal(await run([...args, '--json'], io), 0, lines.join('\n'));
    server.store.clearCaches();
    return JSON.parse(lines.join('\n')) as Record<string, unknown>;
  }

  before(async () => {
    server = await startServer();
    keys = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'jar-1' };
    const created = await cli(
      'clients',
      'create',
      '--name',
      'JAR',
      '--redirect-uri',
      REDIRECT,
      '--scope',
      'openid profile email',
      '--jwks',
      JSON.stringify({ keys: [jwk] }),
    );
    clientId = created.client_id as string;
    secret = created.client_secret as string;
  });
  after(() => server.close());

  const authorize = (params: Record<string, string>) =>
    new BrowserSim(server.issuer).request(`/oauth2/authorize?${new URLSearchParams(params)}`);
  const sign = (claims: Record<string, unknown>, key = keys.privateKey) =>
    new SignJWT({ client_id: clientId, ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'jar-1' }).sign(key);

  it('discovery says request objects are supported, with their algs', async () => {
    const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(metadata.request_parameter_supported, true);
    assert.ok((metadata.request_object_signing_alg_values_supported as string[]).includes('ES256'));
  });

  it('openid-client: buildAuthorizationUrlWithJAR, sign-in, tokens; the object wins over the query', async () => {
    const config = await client.discovery(new URL(server.issuer), clientId, secret, client.ClientSecretBasic(secret), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid email',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { key: keys.privateKey, kid: 'jar-1' },
    );
    assert.ok(url.searchParams.get('request'));
    url.searchParams.set('scope', 'openid profile'); // the query's, which the object's replaces
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    assert.equal(tokens.scope, 'openid email');
  });

  it('oauth4webapi: a request object pushed to /oauth2/par', async () => {
    const issuer = new URL(server.issuer);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const c: oauth.Client = { client_id: clientId };
    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    const request = await oauth.issueRequestObject(
      as,
      c,
      {
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid profile',
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { key: keys.privateKey, kid: 'jar-1' },
    );
    const response = await oauth.pushedAuthorizationRequest(
      as,
      c,
      oauth.ClientSecretBasic(secret),
      { request },
      insecure,
    );
    const pushed = await oauth.processPushedAuthorizationResponse(as, c, response);
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: clientId, request_uri: pushed.request_uri }).toString();
    const callback = await new BrowserSim(server.issuer).authorize(url.href, server.user);
    const code = oauth.validateAuthResponse(as, c, callback, state);
    const grant = await oauth.authorizationCodeGrantRequest(
      as,
      c,
      oauth.ClientSecretBasic(secret),
      code,
      REDIRECT,
      verifier,
      insecure,
    );
    assert.equal((await oauth.processAuthorizationCodeResponse(as, c, grant)).scope, 'openid profile');

    // A request object signed with another key, pushed: invalid_request_object, as JSON.
    const other = await generateKeyPair('ES256');
    const forged = await oauth.pushedAuthorizationRequest(
      as,
      c,
      oauth.ClientSecretBasic(secret),
      { request: await sign({ redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' }, other.privateKey) },
      insecure,
    );
    assert.equal(forged.status, 400);
    assert.equal(((await forged.json()) as { error: string }).error, 'invalid_request_object');
  });

  it('refused: another key, another client_id, an aud for another server, an unsigned object', async () => {
    const base = { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' };
    const other = await generateKeyPair('ES256');
    const unsigned = new UnsecuredJWT({ client_id: clientId, ...base }).encode();
    const refused = [
      await sign(base, other.privateKey),
      await sign({ ...base, client_id: server.clients.confidential.id }),
      await sign({ ...base, aud: 'https://elsewhere.example' }),
      unsigned,
    ];
    for (const request of refused) {
      const response = await authorize({ client_id: clientId, request });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /invalid_request_object/);
    }
    // Signed and addressed to this server: a redirect to the login page.
    const good = await authorize({
      client_id: clientId,
      request: await sign({ ...base, aud: server.issuer, iss: clientId }),
    });
    assert.equal(good.status, 302);
    assert.match(good.headers.get('location')!, /^\/login\?/);
    // Registered for none: the unsigned object goes through, and a signed one no longer does.
    await cli('clients', 'update', clientId, '--request-object-signing-alg', 'none');
    assert.equal((await authorize({ client_id: clientId, request: unsigned })).status, 302);
    assert.equal((await authorize({ client_id: clientId, request: await sign(base) })).status, 400);
    await cli('clients', 'update', clientId, '--request-object-signing-alg', 'any');
    assert.equal((await authorize({ client_id: clientId, request: unsigned })).status, 400);
  });
});
