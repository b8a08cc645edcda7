// What a client that registers itself may get, sent as the attacker sent it: an anonymous registration
// (TESSERA_REGISTRATION=open) or one with any user's `apps` token asking for client_credentials and
// every scope, directly or later with an RFC 7592 update; an update undoing the operator's
// `clients update`; and a registered client introspecting other people's tokens.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { cliIo, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
type Json = Record<string, any>;

async function register(server: TestServer, body: Json, token?: string) {
  const response = await fetch(`${server.issuer}/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function update(registered: Json, body: Json) {
  const response = await fetch(registered.registration_client_uri, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${registered.registration_access_token}` },
    body: JSON.stringify({ client_id: registered.client_id, ...body }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

/** The client_credentials token request the attacker made with the registered client's secret. */
async function machineToken(server: TestServer, registered: Json) {
  const form = { grant_type: 'client_credentials', scope: 'apps webhooks' };
  const response = await tokenRequest(server, form, basic(registered.client_id, registered.client_secret));
  return { status: response.status, body: (await response.json()) as Json };
}

async function userToken(server: TestServer, scope: string): Promise<string> {
  const issued = await getCode(server, server.clients.firstParty, { scope });
  return ((await (await exchange(server, issued)).json()) as Json).access_token;
}

const MACHINE = { client_name: 'machine', grant_types: ['client_credentials'], scope: 'apps webhooks' };
const WEB_APP = { client_name: 'web app', redirect_uris: ['https://app.example/cb'] };

describe('open registration: an anonymous client gets no client_credentials and no API scope', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TESSERA_REGISTRATION: 'open' } });
  });
  after(() => server?.close());

  it('refuses client_credentials and the API scopes, and gives the safe scopes by default', async () => {
    const machine = await register(server, MACHINE);
    assert.equal(machine.status, 400, JSON.stringify(machine.body));
    assert.equal(machine.body.error, 'invalid_client_metadata');
    const both = await register(server, { ...WEB_APP, grant_types: ['authorization_code', 'client_credentials'] });
    assert.equal(both.body.error, 'invalid_client_metadata');

    const plain = await register(server, WEB_APP);
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
    assert.equal(plain.body.scope, 'openid profile email', "the operator's safe set, not every scope");
    const token = await machineToken(server, plain.body);
    assert.equal(token.status, 400);
    assert.equal(token.body.error, 'unauthorized_client');
    assert.equal(token.body.access_token, undefined);

    // Nor later, by replacing its registration.
    const widened = await update(plain.body, { ...WEB_APP, grant_types: ['authorization_code', 'client_credentials'] });
    assert.equal(widened.status, 400);
    assert.equal((await machineToken(server, plain.body)).body.error, 'unauthorized_client');
  });

  it('will not start with client_credentials for clients anyone registers', () => {
    const env = {
      TESSERA_REGISTRATION: 'open',
      TESSERA_REGISTRATION_GRANT_TYPES: 'authorization_code client_credentials',
    };
    assert.throws(() => loadConfig(env), ConfigError);
    const authenticated = { ...env, TESSERA_REGISTRATION: 'authenticated' };
    assert.deepEqual(loadConfig(authenticated).registration.grantTypes, ['authorization_code', 'client_credentials']);
  });
});

describe("registration with any user's apps token", () => {
  let server: TestServer;
  let appsToken: string;
  before(async () => {
    server = await startServer();
    appsToken = await userToken(server, 'openid apps');
  });
  after(() => server?.close());

  it('gets no client_credentials token, registering or updating', async () => {
    const machine = await register(server, MACHINE, appsToken);
    assert.equal(machine.status, 400, JSON.stringify(machine.body));
    const registered = await register(server, WEB_APP, appsToken);
    assert.equal(registered.status, 201);
    assert.equal((await machineToken(server, registered.body)).body.error, 'unauthorized_client');
    const widened = await update(registered.body, {
      ...WEB_APP,
      grant_types: ['authorization_code', 'client_credentials'],
      scope: 'openid apps webhooks',
    });
    assert.equal(widened.status, 400, JSON.stringify(widened.body));
    assert.equal((await machineToken(server, registered.body)).body.error, 'unauthorized_client');
  });

  it("an RFC 7592 update never undoes the operator's clients update", async () => {
    const registered = (await register(server, { ...WEB_APP, scope: 'openid profile email' }, appsToken)).body;
    const { io, lines } = cliIo(server);
    assert.equal(await run(['clients', 'update', registered.client_id, '--scope', 'openid'], io), 0, lines.join('\n'));
    const restored = await update(registered, { ...WEB_APP, scope: 'openid profile email' });
    assert.equal(restored.status, 400);
    assert.equal(restored.body.error, 'invalid_client_metadata');
    assert.deepEqual((await server.store.getClient(registered.client_id))?.scopes, ['openid']);
    // Omitting the scope keeps the narrowed one: the RFC's "default" is what the client has.
    const renamed = await update(registered, { ...WEB_APP, client_name: 'renamed' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.scope, 'openid');
  });

  it("a registered client introspects only its own tokens, not other people's", async () => {
    const registered = (
      await register(
        server,
        { redirect_uris: [`${server.issuer}/cb/introspector`], scope: 'openid profile' },
        appsToken,
      )
    ).body;
    const introspect = async (clientId: string, secret: string, token: string) =>
      (await (
        await fetch(`${server.issuer}/oauth2/introspect`, {
          method: 'POST',
          headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }),
        })
      ).json()) as Json;
    // Alice's token, issued to another client.
    const c = server.clients.confidential;
    const others = ((await (await exchange(server, await getCode(server, c, { scope: 'openid' }))).json()) as Json)
      .access_token;
    assert.deepEqual(await introspect(registered.client_id, registered.client_secret, others), { active: false });
    // The operator's client (an API registered to ask) still may; and the registered client, its own.
    assert.equal((await introspect(c.id, c.secret!, others)).active, true);
    const self: TestClient = {
      id: registered.client_id,
      secret: registered.client_secret,
      redirectUri: `${server.issuer}/cb/introspector`,
      postLogoutRedirectUri: '',
    };
    const own = ((await (await exchange(server, await getCode(server, self, { scope: 'openid' }))).json()) as Json)
      .access_token;
    const answer = await introspect(registered.client_id, registered.client_secret, own);
    assert.equal(answer.active, true);
    assert.equal(answer.client_id, registered.client_id);
  });
});
