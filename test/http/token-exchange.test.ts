// Token exchange (RFC 8693) driven by oauth4webapi's generic grant: an agent the operator allowed
// narrows a person's access token for an API, and the result says who acts (`act`), keeps within the
// subject's scope and life, names the audience and stays tied to the person's grant; an API that
// exchanges such a token again nests the earlier actor; an actor token names the actor; an ID token
// the client was issued is a subject too. Refused: a wider scope (invalid_scope), an audience not
// allowed (invalid_target), a client without the grant (unauthorized_client), a bad subject token
// (invalid_request). Each exchange is an event naming the person and the actor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { run } from '../../src/cli/main.ts';
import { cliIo, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const API = 'https://api.example.com';
const DOWNSTREAM = 'https://downstream.example.com';
const insecure = { [oauth.allowInsecureRequests]: true };

describe('token exchange (RFC 8693)', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let agent: TestClient;
  let api: { id: string; secret: string };
  let subject: { access_token: string; id_token: string };

  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    const { lines, io } = cliIo(server);
    const code = await run([...args, '--json'], io);
    assert.equal(code, 0, lines.join('\n'));
    server.store.clearCaches();
    return JSON.parse(lines.join('\n')) as Record<string, unknown>;
  }

  /** The exchange as oauth4webapi sends it, by `client` with its secret; the response processed. */
  async function exchangeAs(client: { id: string; secret: string }, parameters: Record<string, string>) {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      { client_id: client.id },
      oauth.ClientSecretBasic(client.secret),
      TOKEN_EXCHANGE,
      parameters,
      insecure,
    );
    return oauth.processGenericTokenEndpointResponse(as, { client_id: client.id }, response);
  }

  /** The raw error body of an exchange. */
  async function refusal(client: { id: string; secret: string }, parameters: Record<string, string>) {
    const response = await tokenRequest(
      server,
      { grant_type: TOKEN_EXCHANGE, ...parameters },
      basic(client.id, client.secret),
    );
    assert.equal(response.status, 400);
    return (await response.json()) as { error: string; error_description: string };
  }

  before(async () => {
    server = await startServer();
    as = await oauth.processDiscoveryResponse(
      new URL(server.issuer),
      await oauth.discoveryRequest(new URL(server.issuer), insecure),
    );
    await cli('resources', 'create', '--uri', API, '--scope', 'apps');
    await cli('resources', 'create', '--uri', DOWNSTREAM, '--scope', 'apps');
    const grants = `authorization_code,refresh_token,${TOKEN_EXCHANGE}`;
    const made = await cli(
      'clients',
      'create',
      '--name',
      'Agent',
      '--first-party',
      '--redirect-uri',
      `${server.issuer}/cb/agent`,
      '--scope',
      'openid profile email apps',
      '--grant-types',
      grants,
      '--exchange-audience',
      API,
    );
    agent = {
      id: made.client_id as string,
      secret: made.client_secret as string,
      redirectUri: `${server.issuer}/cb/agent`,
      postLogoutRedirectUri: '',
    };
    const apiClient = await cli(
      'clients',
      'create',
      '--name',
      'API',
      '--scope',
      'apps',
      '--grant-types',
      `client_credentials,${TOKEN_EXCHANGE}`,
      '--exchange-audience',
      DOWNSTREAM,
    );
    api = { id: apiClient.client_id as string, secret: apiClient.client_secret as string };
    const issued = await getCode(server, agent, { scope: 'openid profile email apps' });
    subject = (await (await exchange(server, issued)).json()) as typeof subject;
  });
  after(() => server?.close());

  const agentCredentials = () => ({ id: agent.id, secret: agent.secret! });

  it('narrows the scope for an allowed audience, with act, the audience and no longer life', async () => {
    const result = await exchangeAs(agentCredentials(), {
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN,
      audience: API,
      scope: 'apps',
    });
    assert.equal(result.issued_token_type, ACCESS_TOKEN);
    assert.equal(result.token_type, 'bearer');
    assert.equal(result.scope, 'apps');
    const claims = decodeJwt(result.access_token);
    const original = decodeJwt(subject.access_token);
    assert.equal(claims.aud, API);
    assert.equal(claims.sub, server.user.id);
    assert.equal(claims.client_id, agent.id);
    assert.deepEqual(claims.act, { sub: agent.id });
    assert.equal(claims.grant_id, original.grant_id);
    assert.ok(claims.exp! <= original.exp!);
    const [event] = await server.store.listEvents({ type: 'token.exchanged', userId: server.user.id, limit: 1 });
    assert.equal(event?.clientId, agent.id);
    assert.equal(event?.data?.actor, agent.id);
    assert.deepEqual(event?.data?.scopes, ['apps']);
  });

  it('without an audience, a narrower token for the same one, which userinfo takes; ended with the grant', async () => {
    const result = await exchangeAs(agentCredentials(), {
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN,
      scope: 'openid profile',
    });
    assert.equal(result.scope, 'openid profile');
    const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${result.access_token}` },
    });
    assert.equal(userinfo.status, 200);
    const body = (await userinfo.json()) as Record<string, unknown>;
    assert.equal(body.sub, server.user.id);
    assert.equal(body.email, undefined, 'the email scope was left out');
  });

  it('an API exchanging an exchanged token nests the earlier actor', async () => {
    const first = await exchangeAs(agentCredentials(), {
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN,
      resource: API,
    });
    const second = await exchangeAs(api, {
      subject_token: first.access_token,
      subject_token_type: ACCESS_TOKEN,
      audience: DOWNSTREAM,
    });
    const claims = decodeJwt(second.access_token);
    assert.equal(claims.aud, DOWNSTREAM);
    assert.equal(claims.scope, 'apps');
    assert.deepEqual(claims.act, { sub: api.id, act: { sub: agent.id } });
    const [event] = await server.store.listEvents({ type: 'token.exchanged', clientId: api.id, limit: 1 });
    assert.equal(event?.data?.delegated_by, agent.id);
    // The token's own audience needs no permission (the API is allowed only the downstream one).
    const same = await exchangeAs(api, {
      subject_token: first.access_token,
      subject_token_type: ACCESS_TOKEN,
      audience: API,
    });
    assert.equal(decodeJwt(same.access_token).aud, API);
  });

  it("an actor token names the actor: the agent's own token (client_credentials)", async () => {
    const own = await tokenRequest(
      server,
      { grant_type: 'client_credentials', scope: 'apps' },
      basic(api.id, api.secret),
    );
    const actorToken = ((await own.json()) as { access_token: string }).access_token;
    const result = await exchangeAs(agentCredentials(), {
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN,
      actor_token: actorToken,
      actor_token_type: ACCESS_TOKEN,
      audience: API,
    });
    assert.deepEqual(decodeJwt(result.access_token).act, { sub: api.id });
  });

  it('an ID token issued to the client is a subject too', async () => {
    const result = await exchangeAs(agentCredentials(), {
      subject_token: subject.id_token,
      subject_token_type: ID_TOKEN,
      audience: API,
    });
    const claims = decodeJwt(result.access_token);
    assert.equal(claims.sub, server.user.id);
    assert.equal(claims.aud, API);
    assert.equal(claims.scope, 'apps');
    // Not another client's ID token.
    const refused = await refusal(api, { subject_token: subject.id_token, subject_token_type: ID_TOKEN });
    assert.equal(refused.error, 'invalid_request');
  });

  it('refuses a wider scope, an audience not allowed, a client without the grant, a bad subject token', async () => {
    const base = { subject_token: subject.access_token, subject_token_type: ACCESS_TOKEN };
    // A token narrowed to apps cannot be widened back to profile by another exchange.
    const narrow = await exchangeAs(agentCredentials(), { ...base, scope: 'apps' });
    const wider = await refusal(agentCredentials(), {
      subject_token: narrow.access_token,
      subject_token_type: ACCESS_TOKEN,
      scope: 'apps profile',
    });
    assert.equal(wider.error, 'invalid_scope');
    assert.equal((await refusal(agentCredentials(), { ...base, audience: DOWNSTREAM })).error, 'invalid_target');
    assert.equal(
      (await refusal(agentCredentials(), { ...base, audience: API, resource: DOWNSTREAM })).error,
      'invalid_target',
    );
    const plain = server.clients.confidential;
    const response = await tokenRequest(
      server,
      { grant_type: TOKEN_EXCHANGE, ...base },
      basic(plain.id, plain.secret!),
    );
    assert.equal(((await response.json()) as { error: string }).error, 'unauthorized_client');
    const forged = `${subject.access_token.slice(0, -4)}AAAA`;
    const bad = await refusal(agentCredentials(), { subject_token: forged, subject_token_type: ACCESS_TOKEN });
    assert.equal(bad.error, 'invalid_request');
    const untyped = await refusal(agentCredentials(), { subject_token: subject.access_token });
    assert.equal(untyped.error, 'invalid_request');
  });

  it('once the person withdraws the grant, its tokens are exchanged no more', async () => {
    const issued = await getCode(server, agent, { scope: 'openid apps' });
    const tokens = (await (await exchange(server, issued)).json()) as { access_token: string };
    const grantId = decodeJwt(tokens.access_token).grant_id as string;
    await server.store.revokeGrant(grantId, Math.floor(Date.now() / 1000));
    const refused = await refusal(agentCredentials(), {
      subject_token: tokens.access_token,
      subject_token_type: ACCESS_TOKEN,
    });
    assert.equal(refused.error, 'invalid_request');
  });
});
