// Every CLI object can be created, shown, changed and deleted: users show and delete (which revokes
// the user's grants and ends their sessions), clients update (the client_id stays).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

describe('the CLI changes and deletes what it creates', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server?.close());

  const cli = async (args: string[], stdin = '') => {
    const { io, lines } = cliIo(server, stdin);
    const code = await run(args, io);
    return { code, out: lines.join('\n') };
  };

  it('users show and delete: the user goes, their grants are revoked and their sessions end', async () => {
    const shown = await cli(['users', 'show', 'alice', '--json']);
    assert.equal(shown.code, 0);
    assert.equal(JSON.parse(shown.out).id, server.user.id);
    const c = server.clients.confidential;
    const browser = new BrowserSim(server.issuer);
    const tokens = (await (await exchange(server, await getCode(server, c, { browser, scope: 'openid' }))).json()) as {
      refresh_token: string;
    };
    assert.equal((await cli(['users', 'delete', 'alice'])).code, 0);
    assert.equal((await cli(['users', 'show', 'alice'])).code, 1);
    const refresh = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(c.id, c.secret!),
    );
    assert.equal(refresh.status, 400);
    assert.equal((await server.store.getSessionAndUser('x', 0)) ?? undefined, undefined);
    const account = await browser.request('/account');
    assert.equal(account.headers.get('location'), '/account/login', 'the session ended');
    const events = await server.store.listEvents({ type: 'user.deleted' });
    assert.equal(events[0]?.userId, server.user.id);
  });

  it('clients rotate-secret --grace keeps the old secret working for the grace period, and not after', async () => {
    const c = server.clients.es256;
    const authenticates = async (secret: string) =>
      (
        await fetch(`${server.issuer}/oauth2/introspect`, {
          method: 'POST',
          headers: { authorization: basic(c.id, secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: 'not-a-token' }),
        })
      ).status === 200;
    const rotated = await cli(['clients', 'rotate-secret', c.id, '--grace', '60', '--json']);
    assert.equal(rotated.code, 0, rotated.out);
    server.store.clearCaches();
    const { client_secret: fresh, previous_secret_expires_at: until } = JSON.parse(rotated.out);
    assert.ok(until);
    assert.equal(await authenticates(fresh), true);
    assert.equal(await authenticates(c.secret!), true, 'the old secret, within the grace period');
    server.clock.offset += 61;
    try {
      assert.equal(await authenticates(c.secret!), false, 'not after it');
      assert.equal(await authenticates(fresh), true);
    } finally {
      server.clock.offset -= 61;
    }
    const again = JSON.parse((await cli(['clients', 'rotate-secret', c.id, '--json'])).out);
    // The server sees a change made by the CLI within its client cache's 5 s; here at once.
    server.store.clearCaches();
    assert.equal(await authenticates(fresh), false, 'without --grace the old secret stops at once');
    assert.equal(await authenticates(again.client_secret), true);
  });

  it('resources and webhooks are shown and changed too', async () => {
    assert.equal((await cli(['resources', 'create', '--uri', 'https://api.example/', '--scope', 'apps'])).code, 0);
    const shown = await cli(['resources', 'show', 'https://api.example/', '--json']);
    assert.equal(JSON.parse(shown.out).scope, 'apps');
    const updated = await cli([
      'resources',
      'update',
      'https://api.example/',
      '--scope',
      'apps webhooks',
      '--name',
      'API',
      '--json',
    ]);
    assert.equal(updated.code, 0, updated.out);
    assert.deepEqual((await server.store.getResource('https://api.example/'))?.scopes, ['apps', 'webhooks']);
    assert.equal((await cli(['resources', 'update', 'https://api.example/', '--scope', 'openid'])).code, 2);
    assert.equal((await cli(['resources', 'show', 'https://nope.example/'])).code, 1);
    const hook = JSON.parse(
      (await cli(['webhooks', 'create', '--url', 'https://hooks.example.com/a', '--events', 'user.locked', '--json']))
        .out,
    ) as { id: string };
    const changed = await cli([
      'webhooks',
      'update',
      hook.id,
      '--url',
      'https://hooks.example.com/b',
      '--events',
      'user.locked,user.unlocked',
      '--json',
    ]);
    assert.equal(changed.code, 0, changed.out);
    const stored = await server.store.getWebhook(hook.id);
    assert.equal(stored?.url, 'https://hooks.example.com/b');
    assert.equal(stored?.events, 'user.locked user.unlocked');
    assert.equal((await cli(['webhooks', 'update', hook.id, '--url', 'http://10.0.0.1/x'])).code, 2);
    assert.equal((await cli(['webhooks', 'update', hook.id, '--events', 'no.such'])).code, 2);
    // A test delivery is queued like any other: due at once, its retry schedule not started.
    const queued = await cli(['webhooks', 'test', hook.id]);
    assert.equal(queued.code, 0, queued.out);
    assert.match(queued.out, /^queued a webhook\.test delivery test_\S+; see it with: tessera webhooks deliveries /);
    const [delivery] = await server.store.listDeliveries(hook.id, 10);
    assert.equal(delivery?.eventType, 'webhook.test');
    assert.equal(delivery?.retryBase, 0);
    assert.ok(delivery.nextAttemptAt >= delivery.createdAt && delivery.createdAt > 0);
  });

  it('clients update changes name, redirect URIs, post-logout URIs and scopes; the client_id stays', async () => {
    const id = server.clients.post.id;
    const updated = await cli([
      'clients',
      'update',
      id,
      '--name',
      'Renamed',
      '--redirect-uri',
      'https://new.example/cb',
      '--post-logout-redirect-uri',
      'https://new.example/bye',
      '--scope',
      'openid apps',
      '--json',
    ]);
    assert.equal(updated.code, 0, updated.out);
    const client = JSON.parse(updated.out);
    assert.equal(client.client_id, id);
    assert.equal(client.client_name, 'Renamed');
    assert.deepEqual(client.redirect_uris, ['https://new.example/cb']);
    assert.deepEqual(client.post_logout_redirect_uris, ['https://new.example/bye']);
    assert.equal(client.scope, 'openid apps');
    assert.equal((await server.store.getClient(id))?.name, 'Renamed');
    assert.equal((await cli(['clients', 'update', id, '--redirect-uri', 'javascript:alert(1)'])).code, 2);
    assert.equal((await cli(['clients', 'update', id, '--scope', 'nope'])).code, 2);
    assert.equal((await cli(['clients', 'update', id, '--name', ' '])).code, 2);
  });

  it('clients create and update refuse an IP address for a host but loopback over http, and `*`', async () => {
    const create = (uri: string) =>
      cli(['clients', 'create', '--name', 'Numeric', '--redirect-uri', uri, '--scope', 'openid', '--public']);
    const id = server.clients.post.id;
    for (const uri of [
      'https://10.0.0.1/cb',
      'https://2130706433/cb',
      'https://[::1]/cb',
      'https://*.app.example/cb',
    ]) {
      for (const refused of [await create(uri), await cli(['clients', 'update', id, '--redirect-uri', uri])]) {
        assert.equal(refused.code, 2, uri);
        assert.match(refused.out, /--redirect-uri: ".*" must not (have an IP address for its host|contain \*)/, uri);
      }
    }
    const loopback = await create('http://127.0.0.1/callback');
    assert.equal(loopback.code, 0, loopback.out);
  });
});
