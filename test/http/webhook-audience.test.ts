// What users' webhooks hear, as the attacker probed it, on SQLite and PostgreSQL: an app owner whose
// webhook listens to everything while other people sign in (or fail to) on the app's login page; a
// user creating webhooks past the limit, at once; and a deleted user whose apps and webhooks should
// stop with them.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { EVENT_TYPES } from '../../src/events/index.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, freePort, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { accessTokenOf, basic, tokenRequest } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
type Json = Record<string, any>;

/** A receiver on 127.0.0.1 that keeps every payload. */
class Receiver {
  readonly payloads: Json[] = [];
  #server: Server | undefined;
  url = '';
  async start() {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}/hook`;
    this.#server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        this.payloads.push(JSON.parse(body) as Json);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(port, '127.0.0.1', resolve));
  }
  async stop() {
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

async function call(server: TestServer, path: string, token: string, body?: unknown) {
  const response = await fetch(`${server.issuer}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

/** Signs `username` in on the client's login page (an authorization request), with `password`. */
async function signInThrough(
  server: TestServer,
  clientId: string,
  redirectUri: string,
  username: string,
  password: string,
) {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  const browser = new BrowserSim(server.issuer);
  const start = await browser.request(`/oauth2/authorize?${query}`);
  return browser.login(start.headers.get('location')!, username, password);
}

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`users' webhooks (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let delivery: WebhookDelivery;
    const receiver = new Receiver();
    const users: Record<string, string> = {};

    before(async () => {
      if (skip) return;
      const env = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true', TESSERA_WEBHOOKS_PER_USER: '3' };
      server = await startServer({ ...(database ? { databaseUrl: database.url } : {}), env });
      await receiver.start();
      delivery = new WebhookDelivery(server.store, {
        secret: server.secret,
        allowPrivate: true,
        interval: 1,
        log: { info() {}, warn() {}, error() {} },
      });
      for (const username of ['bob', 'dave', 'erin']) {
        const passwordHash = await hashPassword(PASSWORD);
        users[username] = (
          await createUser(server.store, null, { username, email: `${username}@example.com`, passwordHash })
        ).id;
      }
    });
    after(async () => {
      await delivery?.stop();
      await receiver.stop();
      await server?.close();
      await database?.drop();
    });

    const deliver = async () => {
      while ((await delivery.runOnce()) > 0);
    };

    it(
      "an app owner's webhook hears nothing of other people's sign-ins on the app's login page",
      { skip },
      async () => {
        // Alice registers a public app and subscribes her webhook to every event there is.
        const alice = server.user;
        const token = await accessTokenOf(server, alice, 'openid apps webhooks');
        const redirectUri = `${server.issuer}/cb/alices-app`;
        const app = await call(server, '/oauth2/register', token, {
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
        });
        assert.equal(app.status, 201);
        const created = await call(server, '/api/webhooks', token, { url: receiver.url, events: [...EVENT_TYPES] });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        await deliver();
        receiver.payloads.length = 0;

        // The probe: bob's wrong password and an unknown username on her app's login page, then bob for real.
        const appId = app.body.client_id as string;
        assert.equal((await signInThrough(server, appId, redirectUri, 'bob', 'wrong password')).status, 303);
        assert.equal((await signInThrough(server, appId, redirectUri, 'no-such-user', 'x')).status, 303);
        const signedIn = await signInThrough(server, appId, redirectUri, 'bob', PASSWORD);
        assert.match(signedIn.headers.get('location')!, /^\/consent\?/);
        // Bob consents (what follows a consent is the owner's to hear).
        const consentBrowser = new BrowserSim(server.issuer);
        const query = new URLSearchParams({
          client_id: appId,
          redirect_uri: redirectUri,
          response_type: 'code',
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        });
        await consentBrowser.authorize(`${server.issuer}/oauth2/authorize?${query}`, {
          username: 'bob',
          password: PASSWORD,
        });
        await deliver();

        const types = receiver.payloads.map((p) => p.type as string);
        for (const type of ['user.sign_in_failed', 'user.signed_in', 'user.sign_in_throttled', 'user.locked']) {
          assert.ok(!types.includes(type), `${type} of other people reached the app's owner (${types.join(', ')})`);
        }
        assert.ok(
          receiver.payloads.every((p) => p.data.reason === undefined),
          'no reason of anyone',
        );
        const consent = receiver.payloads.find((p) => p.type === 'consent.granted');
        assert.ok(consent, `the consent to her app reached her (${types.join(', ')})`);
        assert.equal(consent.data.user_id, users.bob, "the user who consented: the app's own sub for him");
        assert.equal(consent.data.ip, undefined);
        assert.equal(consent.data.user_agent, undefined);
        for (const payload of receiver.payloads) {
          assert.ok([alice.id, users.bob, null].includes(payload.data.user_id), JSON.stringify(payload));
          if (payload.data.user_id === users.bob) assert.ok(payload.type.startsWith('consent.'), payload.type);
        }
        // Her own failed sign-in is hers to hear, reason and all.
        receiver.payloads.length = 0;
        assert.equal((await signInThrough(server, appId, redirectUri, 'alice', 'typo')).status, 303);
        await deliver();
        const own = receiver.payloads.find((p) => p.type === 'user.sign_in_failed');
        assert.equal(own?.data.user_id, alice.id);
        assert.equal(own?.data.reason, 'wrong_password');
      },
    );

    it('a user has at most TESSERA_WEBHOOKS_PER_USER webhooks, however fast they ask', { skip }, async () => {
      const token = await accessTokenOf(server, { username: 'erin', password: PASSWORD }, 'openid webhooks');
      const statuses = await Promise.all(
        Array.from(
          { length: 10 },
          async (_, i) =>
            (await call(server, '/api/webhooks', token, { url: `${receiver.url}?${i}`, events: ['user.signed_in'] }))
              .status,
        ),
      );
      assert.deepEqual(
        statuses.sort(),
        [201, 201, 201, 400, 400, 400, 400, 400, 400, 400],
        'three created, the rest refused',
      );
      const refused = await call(server, '/api/webhooks', token, { url: receiver.url, events: ['user.signed_in'] });
      assert.equal(refused.body.error, 'invalid_request');
      assert.match(refused.body.error_description, /at most 3 webhooks/);
      assert.equal((await server.store.listWebhooks(users.erin)).length, 3);
      const created = await server.store.listEvents({ userId: users.erin, type: 'webhook.created', limit: 100 });
      assert.equal(created.length, 3, 'an event for each webhook made, none for those refused');
    });

    it("a deleted user's apps, registration tokens and webhooks stop with them", { skip }, async () => {
      const dave = { username: 'dave', password: PASSWORD };
      const token = await accessTokenOf(server, dave, 'openid apps webhooks');
      const redirectUri = `${server.issuer}/cb/daves-app`;
      const grantTypes = ['authorization_code', 'refresh_token'];
      const app = (
        await call(server, '/oauth2/register', token, { redirect_uris: [redirectUri], grant_types: grantTypes })
      ).body;
      const hook = await call(server, '/api/webhooks', token, { url: receiver.url, events: ['consent.granted'] });
      assert.equal(hook.status, 201);
      // Alice uses dave's app: a refresh token of hers for it.
      const query = new URLSearchParams({
        client_id: app.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
      });
      const callback = await new BrowserSim(server.issuer).authorize(
        `${server.issuer}/oauth2/authorize?${query}`,
        server.user,
      );
      const form = {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: redirectUri,
      };
      const tokens = (await (await tokenRequest(server, form, basic(app.client_id, app.client_secret))).json()) as Json;
      assert.ok(tokens.refresh_token);
      await deliver();

      const { io, lines } = cliIo(server);
      assert.equal(await run(['users', 'delete', 'dave'], io), 0, lines.join('\n'));
      // The CLI's change reaches the server's client cache within seconds (docs/cli.md); not waited for here.
      server.store.clearCaches();

      const refreshed = await tokenRequest(
        server,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
        basic(app.client_id, app.client_secret),
      );
      assert.equal(refreshed.status, 401, 'the app is gone');
      const userinfo = await fetch(`${server.issuer}/oauth2/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(userinfo.status, 401, "the app's access tokens are inactive");
      const managed = await fetch(app.registration_client_uri, {
        headers: { authorization: `Bearer ${app.registration_access_token}` },
      });
      assert.equal(managed.status, 401, 'its registration access token works no more');
      assert.deepEqual(await server.store.listWebhooks(users.dave), []);
      // Nothing more reaches dave's receiver: alice's next consent to another app is not his.
      receiver.payloads.length = 0;
      const c = server.clients.confidential;
      const again = new URLSearchParams({
        client_id: c.id,
        redirect_uri: c.redirectUri,
        response_type: 'code',
        scope: 'openid email',
        prompt: 'consent',
      });
      await new BrowserSim(server.issuer).authorize(`${server.issuer}/oauth2/authorize?${again}`, server.user);
      await deliver();
      assert.ok(receiver.payloads.every((p) => p.data.user_id !== users.dave));
      const daves = await (
        await server.db()
      )
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', hook.body.id)
        .where('status', '=', 'pending')
        .execute();
      assert.deepEqual(daves, []);
    });
  });
}
