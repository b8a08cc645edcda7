// The Identity Assertion JWT Authorization Grant (ID-JAG) between two Tessera instances, each with its
// own database (the second on PostgreSQL): the first, the company's identity provider, mints an ID-JAG
// for a person's ID token under a connection policy (`tessera connections`), by token exchange; the
// second, an MCP server's authorization server, trusts the first for ID-JAGs (`providers create
// --accept-id-jag`) and redeems it with the jwt-bearer grant for an access token of the person linked
// there. Refused: a wrong typ, audience, client_id, an expired assertion, a replayed jti, an issuer
// not trusted, a person not linked where the provider only links; at the mint, an audience without a
// connection and scopes outside it. An issuer that cannot be reached is 503. oauth4webapi's generic grant
// drives both sides, and the MCP SDK's auth() redeems too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import type { SigningAlg } from '../../src/tokens/keystore.ts';
import { signJws } from '../../src/tokens/jwt.ts';
import { cliIo, freePort, PASSWORD, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

/**
 * An MCP client's last step of enterprise-managed authorization: the MCP SDK's non-interactive
 * provider (its client's id and secret at the MCP server's authorization server), whose token request
 * is the jwt-bearer grant with the ID-JAG the identity provider minted.
 */
class IdJagProvider extends ClientCredentialsProvider {
  readonly assertion: string;
  constructor(options: ConstructorParameters<typeof ClientCredentialsProvider>[0], assertion: string) {
    super(options);
    this.assertion = assertion;
  }
  override prepareTokenRequest(): URLSearchParams {
    return new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: this.assertion,
    });
  }
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const MCP = 'https://mcp.example.com';
const insecure = { [oauth.allowInsecureRequests]: true };

describe('ID-JAG minted by one Tessera and redeemed by another', () => {
  let database: TestDatabase | undefined;
  let idp: TestServer;
  let rs: TestServer;
  let agent: TestClient;
  let remote: { id: string; secret: string };
  let providerId: string;
  let idToken: string;

  async function cli(server: TestServer, args: string[], stdin = ''): Promise<Record<string, unknown>> {
    const { lines, io } = cliIo(server, stdin);
    io.env.TESSERA_OUTBOUND_ALLOW_PRIVATE = 'true';
    const code = await run([...args, '--json'], io);
    assert.equal(code, 0, lines.join('\n'));
    server.store.clearCaches();
    return JSON.parse(lines.filter((l) => !l.startsWith('discovered')).join('\n')) as Record<string, unknown>;
  }

  async function metadata(server: TestServer) {
    const issuer = new URL(server.issuer);
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  }

  /** The agent asks the identity provider for an ID-JAG: the raw response. */
  async function mint(parameters: Record<string, string>, subject = idToken): Promise<Response> {
    return oauth.genericTokenEndpointRequest(
      await metadata(idp),
      { client_id: agent.id },
      oauth.ClientSecretBasic(agent.secret!),
      TOKEN_EXCHANGE,
      { subject_token: subject, subject_token_type: ID_TOKEN, requested_token_type: ID_JAG, ...parameters },
      insecure,
    );
  }

  /** The client at the resource's authorization server redeems `assertion`: the raw response. */
  async function redeem(assertion: string, extra: Record<string, string> = {}): Promise<Response> {
    return oauth.genericTokenEndpointRequest(
      await metadata(rs),
      { client_id: remote.id },
      oauth.ClientSecretBasic(remote.secret),
      JWT_BEARER,
      { assertion, ...extra },
      insecure,
    );
  }

  async function minted(parameters: Record<string, string> = {}, subject = idToken): Promise<string> {
    const response = await mint({ audience: rs.issuer, ...parameters }, subject);
    const body = await oauth.processGenericTokenEndpointResponse(
      await metadata(idp),
      { client_id: agent.id },
      response,
      { recognizedTokenTypes: { n_a: () => {} } },
    );
    assert.equal(body.issued_token_type, ID_JAG);
    return body.access_token;
  }

  /** An assertion signed with the identity provider's own key, as a forger with it would; `over` changes it. */
  async function forged(over: Record<string, unknown> = {}, typ = 'oauth-id-jag+jwt'): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      iss: idp.issuer,
      sub: idp.user.id,
      aud: rs.issuer,
      client_id: remote.id,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
      scope: 'apps',
      ...over,
    };
    return signJws(idp.keys.signingKey(idp.config.signingAlg as SigningAlg), typ, payload);
  }

  async function refusedWith(response: Response, error: string): Promise<void> {
    const body = (await response.json()) as { error: string };
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(body.error, error);
  }

  before(async () => {
    database = await withPostgresDatabase();
    idp = await startServer();
    const env = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
    rs = await startServer(database ? { databaseUrl: database.url, env } : { env });
    // The resource's authorization server: the MCP server's API, a client for the agent, and the
    // identity provider trusted for ID-JAGs, its person linked to the user here.
    await cli(rs, ['resources', 'create', '--uri', MCP, '--scope', 'apps']);
    const made = await cli(rs, [
      'clients',
      'create',
      '--name',
      'Agent at MCP',
      '--scope',
      'apps webhooks',
      '--grant-types',
      JWT_BEARER,
    ]);
    remote = { id: made.client_id as string, secret: made.client_secret as string };
    const provider = await cli(
      rs,
      [
        'providers',
        'create',
        '--type',
        'oidc',
        '--issuer',
        idp.issuer,
        '--client-id',
        'rs',
        '--client-secret-stdin',
        '--accept-id-jag',
        '--link-only',
      ],
      'provider-secret\n',
    );
    providerId = provider.id as string;
    assert.equal(provider.accept_id_jag, true);
    const now = Math.floor(Date.now() / 1000);
    await rs.store.createLink({
      providerId,
      subject: idp.user.id,
      userId: rs.user.id,
      email: null,
      createdAt: now,
      lastUsedAt: null,
    });
    // The identity provider: the agent, signed in to by the person, and its connection to the MCP server's.
    const agentMade = await cli(idp, [
      'clients',
      'create',
      '--name',
      'Agent',
      '--first-party',
      '--redirect-uri',
      `${idp.issuer}/cb/agent`,
      '--scope',
      'openid profile',
      '--grant-types',
      `authorization_code,${TOKEN_EXCHANGE}`,
    ]);
    agent = {
      id: agentMade.client_id as string,
      secret: agentMade.client_secret as string,
      redirectUri: `${idp.issuer}/cb/agent`,
      postLogoutRedirectUri: '',
    };
    const connection = await cli(idp, [
      'connections',
      'create',
      '--client',
      agent.id,
      '--audience',
      rs.issuer,
      '--remote-client-id',
      remote.id,
      '--scope',
      'apps webhooks',
      '--resource',
      MCP,
    ]);
    assert.equal(connection.remote_client_id, remote.id);
    const issued = await getCode(idp, agent, { scope: 'openid profile' });
    idToken = ((await (await exchange(idp, issued)).json()) as { id_token: string }).id_token;
  });
  after(async () => {
    await rs?.close();
    await idp?.close();
    await database?.drop();
  });

  it('advertises the grants and the ID-JAG profile', async () => {
    const as = await metadata(rs);
    assert.ok(as.grant_types_supported?.includes(JWT_BEARER));
    assert.ok(as.grant_types_supported?.includes(TOKEN_EXCHANGE));
    assert.deepEqual(as.authorization_grant_profiles_supported, ['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  it('mints an ID-JAG under the connection, redeemed for an access token of the linked person', async () => {
    const assertion = await minted({ scope: 'apps openid' });
    assert.equal(decodeProtectedHeader(assertion).typ, 'oauth-id-jag+jwt');
    const claims = decodeJwt(assertion);
    assert.equal(claims.iss, idp.issuer);
    assert.equal(claims.sub, idp.user.id);
    assert.equal(claims.aud, rs.issuer);
    assert.equal(claims.client_id, remote.id);
    assert.equal(claims.scope, 'apps', 'the scopes asked for within the connection');
    assert.equal(claims.resource, MCP);
    assert.ok(typeof claims.jti === 'string' && typeof claims.auth_time === 'number');
    assert.ok(claims.exp! - claims.iat! <= 300);
    assert.deepEqual(claims.amr, ['pwd']);
    const [issuedEvent] = await idp.store.listEvents({ type: 'id_jag.issued', userId: idp.user.id, limit: 1 });
    assert.equal(issuedEvent?.data?.remote_client_id, remote.id);

    const response = await redeem(assertion);
    const token = await oauth.processGenericTokenEndpointResponse(
      await metadata(rs),
      { client_id: remote.id },
      response,
    );
    assert.equal(token.scope, 'apps');
    assert.equal(token.refresh_token, undefined);
    const access = decodeJwt(token.access_token);
    assert.equal(access.sub, rs.user.id);
    assert.equal(access.aud, MCP);
    assert.equal(access.client_id, remote.id);
    const grants = await rs.store.listActiveGrants(rs.user.id, Math.floor(Date.now() / 1000));
    assert.ok(grants.some((g) => g.clientId === remote.id && g.id === access.grant_id));
    const [redeemed] = await rs.store.listEvents({ type: 'id_jag.redeemed', userId: rs.user.id, limit: 1 });
    assert.equal(redeemed?.data?.provider, providerId);

    // RFC 7523 §3: the jti once, across every instance (the store).
    await refusedWith(await redeem(assertion), 'invalid_grant');
  });

  it("the MCP SDK's auth() redeems a minted ID-JAG with a jwt-bearer token request", async () => {
    const options = { clientId: remote.id, clientSecret: remote.secret, expectedIssuer: rs.issuer };
    const provider = new IdJagProvider(options, await minted());
    assert.equal(await auth(provider, { serverUrl: rs.issuer }), 'AUTHORIZED');
    // Minted for the connection's apps and webhooks; the MCP server's resource accepts apps alone.
    assert.equal(decodeJwt(provider.assertion).scope, 'apps webhooks');
    assert.equal(provider.tokens()?.scope, 'apps');
    assert.equal(decodeJwt(provider.tokens()!.access_token).sub, rs.user.id);
  });

  it('refuses a wrong typ, audience, client_id, an expired one and an untrusted issuer', async () => {
    // The control: signed as the provider signs, with nothing wrong, it is redeemed.
    assert.equal((await redeem(await forged())).status, 200);
    await refusedWith(await redeem(await forged({}, 'JWT')), 'invalid_grant');
    await refusedWith(await redeem(await forged({ aud: idp.issuer })), 'invalid_grant');
    await refusedWith(await redeem(await forged({ client_id: 'someone-else' })), 'invalid_grant');
    const past = Math.floor(Date.now() / 1000) - 400;
    await refusedWith(await redeem(await forged({ iat: past, exp: past + 300 })), 'invalid_grant');
    await refusedWith(await redeem(await forged({ iss: 'https://other.example' })), 'invalid_grant');
    const now = Math.floor(Date.now() / 1000);
    await refusedWith(await redeem(await forged({ exp: now + 86_400 })), 'invalid_grant');
    // A resource other than the assertion's, or one not registered here.
    await refusedWith(
      await redeem(await forged({ resource: MCP }), { resource: 'https://x.example' }),
      'invalid_target',
    );
    await refusedWith(await redeem(await forged({ resource: 'https://x.example' })), 'invalid_target');
    // An ID token of the provider is not an ID-JAG.
    await refusedWith(await redeem(idToken), 'invalid_grant');
  });

  it('an issuer that cannot be reached is 503, for the client to try again', async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const args = ['providers', 'create', '--type', 'oidc', '--id', 'down', '--issuer', down, '--client-id', 'rs'];
    await cli(rs, [...args, '--client-secret-stdin', '--accept-id-jag', '--no-check'], 'secret\n');
    const response = await redeem(await forged({ iss: down }));
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { error: string }).error, 'temporarily_unavailable');
  });

  it('a person not linked: refused while the provider only links, made a user once it may', async () => {
    await createUser(idp.store, idp.config, {
      username: 'bob',
      email: 'bob@example.com',
      passwordHash: await hashPassword(PASSWORD),
    });
    const browser = new BrowserSim(idp.issuer);
    const query = new URLSearchParams({
      client_id: agent.id,
      redirect_uri: agent.redirectUri,
      response_type: 'code',
      scope: 'openid',
    });
    const callback = await browser.authorize(`${idp.issuer}/oauth2/authorize?${query}`, {
      username: 'bob',
      password: PASSWORD,
    });
    const form = {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: agent.redirectUri,
    };
    const bobs = (await (await tokenRequest(idp, form, basic(agent.id, agent.secret!))).json()) as { id_token: string };
    await refusedWith(await redeem(await minted({}, bobs.id_token)), 'invalid_grant');
    await cli(rs, ['providers', 'update', providerId, '--no-link-only']);
    const response = await redeem(await minted({}, bobs.id_token));
    assert.equal(response.status, 200);
    const access = decodeJwt(((await response.json()) as { access_token: string }).access_token);
    assert.notEqual(access.sub, rs.user.id);
    assert.equal((await rs.store.getUserById(access.sub!))?.disabled, false);
  });

  it('mints nothing without a connection, outside its scopes, or for an access token', async () => {
    await refusedWith(await mint({ audience: 'https://elsewhere.example' }), 'invalid_target');
    await refusedWith(await mint({ audience: rs.issuer, scope: 'admin' }), 'invalid_scope');
    await refusedWith(await mint({ audience: rs.issuer, resource: 'https://other.example.com' }), 'invalid_target');
    await refusedWith(await mint({}), 'invalid_request');
    const issued = await getCode(idp, agent, { scope: 'openid profile' });
    const tokens = (await (await exchange(idp, issued)).json()) as { access_token: string };
    const response = await tokenRequest(
      idp,
      {
        grant_type: TOKEN_EXCHANGE,
        subject_token: tokens.access_token,
        subject_token_type: ACCESS_TOKEN,
        requested_token_type: ID_JAG,
        audience: rs.issuer,
      },
      basic(agent.id, agent.secret!),
    );
    await refusedWith(response, 'invalid_request');
  });
});
