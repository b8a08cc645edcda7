// Disabling a user stops what acts for them as deleting does, for as long as they are disabled, on
// SQLite and PostgreSQL: dave's app gets no tokens (code, refresh, client_credentials) and the tokens
// issued to it are inactive; his registration access token manages nothing; his own tokens are
// refused; his webhook delivers nothing, and hears nothing of what happens meanwhile. Enabled again,
// his app and webhook work again (the tokens issued to the app stay revoked) while alice's use of
// another app never stopped.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, PASSWORD, startServer, type TestClient, type TestServer } from '../helpers/server.ts';
import { accessTokenOf, basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { Receiver } from '../helpers/webhook-receiver.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
type Json = Record<string, any>;

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`a disabled user's apps, tokens and webhooks (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let delivery: WebhookDelivery;
    const receiver = new Receiver(false);

    before(async () => {
      if (skip) return;
      const env = {
        TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
        TESSERA_REGISTRATION_GRANT_TYPES: 'authorization_code refresh_token client_credentials',
        TESSERA_REGISTRATION_SCOPES: 'openid profile email apps',
      };
      server = await startServer({ ...(database ? { databaseUrl: database.url } : {}), env });
      await receiver.start();
      delivery = new WebhookDelivery(server.store, {
        secret: server.secret,
        allowPrivate: true,
        interval: 1,
        log: { info() {}, warn() {}, error() {} },
      });
      await createUser(server.store, null, {
        username: 'dave',
        email: 'dave@example.com',
        passwordHash: await hashPassword(PASSWORD),
      });
    });
    after(async () => {
      await delivery?.stop();
      await receiver.stop();
      await server?.close();
      await database?.drop();
    });

    const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as Json });
    const post = (path: string, token: string, body: unknown) =>
      fetch(`${server.issuer}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const introspect = async (token: string) => {
      const c = server.clients.confidential;
      const response = await fetch(`${server.issuer}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
        body: new URLSearchParams({ token }),
      });
      return ((await response.json()) as Json).active as boolean;
    };
    const userinfo = async (token: string) =>
      (await fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;
    const deliver = async () => {
      while ((await delivery.runOnce()) > 0);
    };
    const cli = async (...args: string[]) => {
      const { io, lines } = cliIo(server);
      assert.equal(await run(args, io), 0, lines.join('\n'));
      server.store.clearCaches(); // the CLI's change reaches the server's client cache within seconds
      return lines.join('\n');
    };

    it('stops while disabled what deleting stops for good, and starts again once enabled', { skip }, async () => {
      const dave = { username: 'dave', password: PASSWORD };
      const own = await accessTokenOf(server, dave, 'openid apps webhooks');
      const redirectUri = `${server.issuer}/cb/daves-app`;
      const grantTypes = ['authorization_code', 'refresh_token', 'client_credentials'];
      const registered = await json(
        await post('/oauth2/register', own, {
          redirect_uris: [redirectUri],
          grant_types: grantTypes,
          scope: 'openid apps',
        }),
      );
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const app = registered.body;
      const events = ['user.disabled', 'user.enabled', 'consent.granted'];
      assert.equal((await post('/api/webhooks', own, { url: receiver.url, events })).status, 201);
      const daves: TestClient = {
        id: app.client_id,
        secret: app.client_secret,
        redirectUri,
        postLogoutRedirectUri: '',
      };
      const credentials = basic(app.client_id, app.client_secret);
      const serviceToken = async () =>
        tokenRequest(server, { grant_type: 'client_credentials', scope: 'apps' }, credentials);
      // Alice uses dave's app (her consent queues a delivery for dave's webhook); the app has a token of its own.
      const alices = (await json(await exchange(server, await getCode(server, daves, { scope: 'openid' })))).body;
      assert.ok(alices.refresh_token);
      const service = (await json(await serviceToken())).body;
      assert.ok(service.access_token);
      const other = (await json(await exchange(server, await getCode(server, server.clients.confidential)))).body;

      assert.match(await cli('users', 'disable', 'dave'), /disabled dave/);
      const refused = { error: 'invalid_client', error_description: 'client authentication failed' };
      const refresh = await json(
        await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: alices.refresh_token }, credentials),
      );
      assert.deepEqual(refresh, { status: 401, body: refused }, 'no refresh through his app');
      assert.deepEqual(await json(await serviceToken()), { status: 401, body: refused }, 'no token of its own');
      assert.equal(await introspect(alices.access_token), false, "the app's access tokens are inactive");
      assert.equal(await userinfo(alices.access_token), 401);
      assert.equal(await introspect(service.access_token), false, "so are the app's own");
      const query = new URLSearchParams({
        client_id: daves.id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
      });
      const authorize = await new BrowserSim(server.issuer).request(`/oauth2/authorize?${query}`);
      assert.equal(authorize.status, 400, 'no authorization request for it');
      assert.equal(authorize.headers.get('location'), null);
      const managed = await fetch(app.registration_client_uri, {
        headers: { authorization: `Bearer ${app.registration_access_token}` },
      });
      assert.equal(managed.status, 401, 'its registration access token manages nothing');
      assert.equal(await userinfo(own), 401, "dave's own tokens are refused");
      assert.equal(await userinfo(other.access_token), 200, "alice's tokens for another app are not touched");
      // His webhook delivers nothing, what was queued waits, and he is not told of his disabling.
      await deliver();
      assert.deepEqual(receiver.received, []);
      // The operator still sees and manages his app.
      assert.match(await cli('clients', 'show', daves.id), new RegExp(daves.id));

      assert.match(await cli('users', 'enable', 'dave'), /enabled dave/);
      assert.equal((await serviceToken()).status, 200, 'his app gets tokens again');
      assert.equal(await userinfo(own), 200, 'his own tokens were refused, not revoked');
      const again = await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: alices.refresh_token },
        credentials,
      );
      assert.equal(again.status, 400, "the app's grants stay revoked: alice signs in to it again");
      await deliver();
      const types = receiver.received.map((body) => (JSON.parse(body) as Json).type as string);
      assert.deepEqual(types.sort(), ['consent.granted', 'user.enabled']);
    });
  });
}
