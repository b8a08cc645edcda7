// Events and webhooks: the audit trail's events delivered as the Standard Webhooks specification
// says, verified with the `standardwebhooks` package in a receiver the test runs; retries and the
// delivery log; users' own webhooks with a `webhooks` token, limited to events about them and their apps.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { run } from '../../src/cli/main.ts';
import { EVENT_TYPES, securityEvent } from '../../src/events/index.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { webhookUrlProblem } from '../../src/webhooks/subscriptions.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, freePort, startServer, type TestServer } from '../helpers/server.ts';
import { exchange, getCode } from '../helpers/tokens.ts';

interface Received {
  headers: Record<string, string>;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** A receiver on 127.0.0.1 that records what it gets, answering `status` (or not listening at all). */
class Receiver {
  readonly received: Received[] = [];
  status = 204;
  server: Server | undefined;
  port = 0;
  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }
  async start(port?: number) {
    this.port = port ?? (await freePort());
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
        this.received.push({ headers, body, payload: JSON.parse(body) });
        response.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }
  async stop() {
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }
  types() {
    return this.received.map((r) => r.payload.type);
  }
}

async function cli(server: TestServer, args: string[]): Promise<{ code: number; out: string }> {
  const { io, lines } = cliIo(server);
  io.env = { ...io.env, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
  const code = await run(args, io);
  return { code, out: lines.join('\n') };
}

/** An operator's webhook made with `tessera webhooks create`: its id and secret. */
async function operatorWebhook(
  server: TestServer,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string }> {
  const created = await cli(server, ['webhooks', 'create', '--url', url, '--events', events.join(','), '--json']);
  assert.equal(created.code, 0, created.out);
  return JSON.parse(created.out) as { id: string; secret: string };
}

describe('webhooks', () => {
  let server: TestServer;
  let delivery: WebhookDelivery;
  const receiver = new Receiver();
  let hook: { id: string; secret: string };
  const log = { info() {}, warn() {}, error() {} };

  before(async () => {
    server = await startServer({ env: { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    await receiver.start();
    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    delivery = new WebhookDelivery(server.store, { secret: server.secret, allowPrivate: true, interval: 1, now, log });
    hook = await operatorWebhook(server, receiver.url, [
      'user.signed_in',
      'user.sign_in_failed',
      'consent.granted',
      'refresh_token.reused',
      'token.revoked',
      'client.created',
      'client.registered',
      'user.disabled',
      'user.enabled',
      'consent.withdrawn',
    ]);
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  });
  after(async () => {
    await delivery?.stop();
    await receiver.stop();
    await server?.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.status = 204;
    server.clock.offset = 0;
  });

  /** Delivers what is due, until nothing is. */
  async function deliver() {
    while ((await delivery.runOnce()) > 0);
  }

  it('every event subscribed to arrives signed, verifiable with the standardwebhooks package', async () => {
    const c = server.clients.confidential;
    // consent.granted and user.signed_in
    const issued = await getCode(server, c, { scope: 'openid apps' });
    const tokens = (await (await exchange(server, issued)).json()) as { refresh_token: string; access_token: string };
    // user.sign_in_failed
    const browser = new BrowserSim(server.issuer);
    const page = await (await browser.request('/account/login')).text();
    await browser.request('/account/login', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), username: 'alice', password: 'wrong password' },
    });
    // refresh_token.reused, then token.revoked
    const auth = `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
    const refresh = (token: string) =>
      fetch(`${server.issuer}/oauth2/token`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }),
      });
    assert.equal((await refresh(tokens.refresh_token)).status, 200);
    assert.equal((await refresh(tokens.refresh_token)).status, 400);
    const second = (await (await exchange(server, await getCode(server, c, { scope: 'openid' }))).json()) as {
      access_token: string;
    };
    await fetch(`${server.issuer}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.access_token }),
    });
    // client.created, user.disabled, user.enabled by the CLI
    assert.equal(
      (
        await cli(server, [
          'clients',
          'create',
          '--name',
          'x',
          '--redirect-uri',
          'https://x.example/cb',
          '--scope',
          'openid',
        ])
      ).code,
      0,
    );
    await deliver();

    const verifier = new Webhook(hook.secret);
    for (const r of receiver.received) {
      assert.deepEqual(verifier.verify(r.body, r.headers), r.payload, 'the signature verifies');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(r.headers['webhook-id']!, /\.wh_/);
      assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      assert.ok(!Number.isNaN(Date.parse(r.payload.timestamp)));
      assert.equal(typeof r.payload.data.event_id, 'string');
    }
    const types = new Set(receiver.types());
    for (const type of [
      'consent.granted',
      'user.signed_in',
      'user.sign_in_failed',
      'refresh_token.reused',
      'token.revoked',
      'client.created',
    ]) {
      assert.ok(types.has(type), `${type} arrived (got ${[...types].join(', ')})`);
    }
    assert.ok(!types.has('code.replayed'), 'only the types subscribed to');
    const failed = receiver.received.find((r) => r.payload.type === 'user.sign_in_failed')!;
    assert.equal(failed.payload.data.reason, 'wrong_password');
    assert.equal(failed.payload.data.ip, '127.0.0.1');
    // A tampered body or a wrong secret does not verify.
    assert.throws(() => verifier.verify(`${failed.body} `, failed.headers));
    assert.throws(() =>
      new Webhook(`whsec_${Buffer.alloc(32).toString('base64')}`).verify(failed.body, failed.headers),
    );
  });

  it('a receiver that is down gets the event once it is back, and the log shows every attempt', async () => {
    await receiver.stop();
    await cli(server, ['users', 'disable', 'alice']);
    await deliver();
    const [pending] = (await server.store.listDeliveries(hook.id, 1)).filter((d) => d.eventType === 'user.disabled');
    assert.equal(pending?.status, 'pending');
    assert.equal(pending?.attempts, 1);
    assert.match(pending!.lastError!, /^network: /);
    // A 500 counts as a failure too.
    await receiver.start(receiver.port);
    receiver.status = 500;
    server.clock.offset += 6;
    await deliver();
    assert.equal(receiver.received.length, 1);
    receiver.status = 200;
    server.clock.offset += 301;
    await deliver();
    assert.equal(receiver.received.length, 2);
    assert.equal(
      receiver.received[0]!.headers['webhook-id'],
      receiver.received[1]!.headers['webhook-id'],
      'one id every attempt',
    );
    const shown = await cli(server, ['webhooks', 'deliveries', hook.id, '--json']);
    const logged = (
      JSON.parse(shown.out) as Array<{
        id: string;
        status: string;
        log: Array<{ status: number | null; duration_ms: number; error: string | null }>;
      }>
    ).find((d) => d.id === pending!.id)!;
    assert.equal(logged.status, 'delivered');
    assert.deepEqual(
      logged.log.map((a) => a.status),
      [null, 500, 200],
    );
    assert.ok(logged.log.every((a) => a.duration_ms >= 0));
    // Redelivered on demand.
    assert.equal((await cli(server, ['webhooks', 'redeliver', pending!.id])).code, 0);
    await deliver();
    assert.equal(receiver.received.length, 3);
    await cli(server, ['users', 'enable', 'alice']).catch(() => undefined);
    await server.store.setUserDisabled(server.user.id, false, Math.floor(Date.now() / 1000));
  });

  it('a delivery failing all day is given up as failed after the last retry', async () => {
    receiver.status = 503;
    await cli(server, ['users', 'set-password', 'nobody']).catch(() => undefined);
    const before = await server.store.listDeliveries(hook.id, 100);
    await cli(server, [
      'clients',
      'create',
      '--name',
      'y',
      '--redirect-uri',
      'https://y.example/cb',
      '--scope',
      'openid',
    ]);
    const [created] = (await server.store.listDeliveries(hook.id, 100)).filter(
      (d) => !before.some((b) => b.id === d.id),
    );
    for (let i = 0; i < 10; i++) {
      await deliver();
      server.clock.offset += 36_001;
    }
    const done = await server.store.getDelivery(created!.id);
    assert.equal(done?.status, 'failed');
    assert.equal(done?.attempts, 8);
  });

  it('rotating the secret signs with both secrets during the grace period', async () => {
    const rotated = await cli(server, ['webhooks', 'rotate-secret', hook.id, '--json']);
    const { secret } = JSON.parse(rotated.out) as { secret: string };
    await cli(server, [
      'clients',
      'create',
      '--name',
      'z',
      '--redirect-uri',
      'https://z.example/cb',
      '--scope',
      'openid',
    ]);
    await deliver();
    const last = receiver.received.at(-1)!;
    assert.equal(last.headers['webhook-signature']!.split(' ').length, 2);
    new Webhook(secret).verify(last.body, last.headers);
    new Webhook(hook.secret).verify(last.body, last.headers);
    hook.secret = secret;
  });

  it("a user's token with webhooks manages only their own webhooks, which get only their events", async () => {
    const userToken = async (scope: string) => {
      const issued = await getCode(server, server.clients.firstParty, { scope });
      return ((await (await exchange(server, issued)).json()) as { access_token: string }).access_token;
    };
    const token = await userToken('openid webhooks apps');
    const api = (method: string, path: string, body?: unknown, bearer = token) =>
      fetch(`${server.issuer}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    assert.equal((await api('GET', '/api/webhooks', undefined, await userToken('openid apps'))).status, 403);
    assert.equal((await fetch(`${server.issuer}/api/webhooks`)).status, 401);
    const mine = new Receiver();
    await mine.start();
    try {
      const created = await api('POST', '/api/webhooks', {
        url: mine.url,
        events: ['user.sign_in_failed', 'client.registered', 'consent.granted'],
      });
      assert.equal(created.status, 201);
      const own = (await created.json()) as { id: string; secret: string; owner_id: string };
      assert.equal(own.owner_id, server.user.id);
      assert.equal((await api('POST', '/api/webhooks', { url: mine.url, events: ['no.such'] })).status, 400);
      const listed = (await (await api('GET', '/api/webhooks')).json()) as { webhooks: Array<{ id: string }> };
      assert.deepEqual(
        listed.webhooks.map((w) => w.id),
        [own.id],
        "the operator's webhook is not listed",
      );
      assert.equal((await api('DELETE', `/api/webhooks/${hook.id}`)).status, 404, "not someone else's");

      // Another user's failed sign-in is not delivered to alice's webhook; her own, and her app's, are.
      const { io } = cliIo(server, 'a long enough password for bob');
      await run(['users', 'create', '--username', 'bob', '--email', 'bob@example.com', '--password-stdin'], io);
      for (const username of ['bob', 'alice']) {
        const browser = new BrowserSim(server.issuer);
        const page = await (await browser.request('/account/login')).text();
        await browser.request('/account/login', {
          form: { csrf: BrowserSim.hidden(page, 'csrf'), username, password: 'wrong password' },
        });
      }
      const registered = (await (
        await api('POST', '/oauth2/register', { redirect_uris: [`${server.issuer}/cb/mine`], scope: 'openid' })
      ).json()) as { client_id: string; client_secret: string };
      // Bob consents to alice's app: an event about her app, caused by someone else.
      const bobsApp = {
        id: registered.client_id,
        secret: registered.client_secret,
        redirectUri: `${server.issuer}/cb/mine`,
        postLogoutRedirectUri: '',
      };
      const bobBrowser = new BrowserSim(server.issuer);
      const query = new URLSearchParams({
        client_id: bobsApp.id,
        redirect_uri: bobsApp.redirectUri,
        response_type: 'code',
        scope: 'openid',
      });
      await bobBrowser.authorize(`${server.issuer}/oauth2/authorize?${query}`, {
        username: 'bob',
        password: 'a long enough password for bob',
      });
      await deliver();
      const verifier = new Webhook(own.secret);
      for (const r of mine.received) verifier.verify(r.body, r.headers);
      const got = mine.received.map((r) => [r.payload.type, r.payload.data.user_id]);
      assert.deepEqual(
        got.filter(([type]) => type === 'user.sign_in_failed').map(([, user]) => user),
        [server.user.id],
        "bob's failed sign-in is not alice's to see",
      );
      assert.ok(got.some(([type]) => type === 'client.registered'));
      const consent = mine.received.find(
        (r) => r.payload.type === 'consent.granted' && r.payload.data.client_id === bobsApp.id,
      );
      assert.ok(consent, "an event about alice's app reaches her webhook");
      assert.equal(consent.payload.data.ip, undefined, "but not the address of someone else's request");
      assert.equal((await api('DELETE', `/api/webhooks/${own.id}`)).status, 204);
      assert.deepEqual(((await (await api('GET', '/api/webhooks')).json()) as { webhooks: unknown[] }).webhooks, []);
    } finally {
      await mine.stop();
    }
  });

  it('refuses receivers inside the network unless allowed, and unknown event types', async () => {
    for (const url of [
      'http://app.example/hook',
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://169.254.169.254/x',
      'https://10.1.2.3/x',
      'https://localhost/x',
      'https://u:p@app.example/x',
      'https://app.example/x#f',
    ]) {
      assert.ok(webhookUrlProblem(url, false), url);
    }
    assert.equal(webhookUrlProblem('https://hooks.example.com/tessera', false), undefined);
    assert.equal(webhookUrlProblem('http://127.0.0.1:8080/hook', true), undefined);
    const unknown = await cli(server, [
      'webhooks',
      'create',
      '--url',
      'https://hooks.example.com/x',
      '--events',
      'user.exploded',
    ]);
    assert.equal(unknown.code, 2);
    // Deleting a webhook drops what it had not delivered.
    const temp = JSON.parse(
      (
        await cli(server, [
          'webhooks',
          'create',
          '--url',
          'https://hooks.example.com/x',
          '--events',
          'client.created',
          '--json',
        ])
      ).out,
    );
    await cli(server, [
      'clients',
      'create',
      '--name',
      'w',
      '--redirect-uri',
      'https://w.example/cb',
      '--scope',
      'openid',
    ]);
    assert.equal((await server.store.listDeliveries(temp.id, 10)).length, 1);
    assert.equal((await cli(server, ['webhooks', 'delete', temp.id])).code, 0);
    assert.equal((await server.store.listDeliveries(temp.id, 10)).length, 0);
  });
  it('every type of the catalogue is delivered to a webhook subscribed to it, signed', async () => {
    const all = await operatorWebhook(server, receiver.url, [...EVENT_TYPES]);
    const now = Math.floor(Date.now() / 1000);
    for (const type of EVENT_TYPES) {
      await server.store.recordEvent(securityEvent(type, now, { userId: server.user.id, data: { probe: type } }));
    }
    await deliver();
    const verifier = new Webhook(all.secret);
    // Its own creation (webhook.created) reaches it too; the probes are what this test sent.
    const got = receiver.received.filter(
      (r) => r.headers['webhook-id']!.endsWith(`.${all.id}`) && r.payload.data.probe,
    );
    for (const r of got) verifier.verify(r.body, r.headers);
    assert.deepEqual(got.map((r) => r.payload.type).sort(), [...EVENT_TYPES].sort());
    assert.ok(got.every((r) => r.payload.data.probe === r.payload.type && r.payload.data.user_id === server.user.id));
    assert.equal((await cli(server, ['webhooks', 'delete', all.id])).code, 0);
  });
});
