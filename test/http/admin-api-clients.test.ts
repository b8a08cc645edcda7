// The admin API's clients: an admin client (made with `tessera clients create --admin`) registers a
// client, reads it with its ETag, changes it by merge patch, rotates its secret with a grace period
// (both secrets then work at the token endpoint), and deletes it; each write an event with its actor.
// Every answer is checked against the OpenAPI document (test/helpers/admin-api.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminClient, caller, type Contract, contractOf } from '../helpers/admin-api.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';

describe('admin API: clients', () => {
  let server: TestServer;
  let contract: Contract;
  let api: ReturnType<typeof caller>;
  let admin: Awaited<ReturnType<typeof adminClient>>;

  before(async () => {
    server = await startServer({ env: { TESSERA_ADMIN_API: 'public' } });
    contract = await contractOf(server.issuer);
    admin = await adminClient(server);
    api = caller(server.issuer, contract, admin.token);
  });
  after(() => server?.close());

  const credentials = async (id: string, secret: string) =>
    (await tokenRequest(server, { grant_type: 'client_credentials' }, basic(id, secret))).status;

  it('registers, reads, changes, rotates and deletes a client', async () => {
    const created = await api('POST', '/clients', {
      body: { name: 'Billing', scope: 'openid profile', redirect_uris: ['https://billing.example.com/cb'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.client.client_id as string;
    assert.ok(created.body.client_secret);
    assert.equal(created.body.client.client_name, 'Billing');
    assert.equal(created.headers.get('location'), `/admin/api/v1/clients/${id}`);

    const listed = await api('GET', '/clients');
    assert.ok(listed.body.items.some((c: { client_id: string }) => c.client_id === id));
    const read = await api('GET', `/clients/${id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.client_secret, undefined, 'a secret is never shown again');
    const etag = read.headers.get('etag')!;

    const patched = await api('PATCH', `/clients/${id}`, {
      type: 'application/merge-patch+json',
      headers: { 'if-match': etag },
      body: {
        name: 'Billing service',
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        access_token_ttl: 300,
      },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.client.client_name, 'Billing service');
    assert.equal(patched.body.client.access_token_ttl, 300);
    const stale = await api('PATCH', `/clients/${id}`, { headers: { 'if-match': etag }, body: { name: 'x' } });
    assert.equal(stale.status, 412);

    assert.equal(await credentials(id, created.body.client_secret), 200);
    const rotated = await api('POST', `/clients/${id}/rotate-secret`, { body: { grace: 600 } });
    assert.equal(rotated.status, 200);
    assert.ok(rotated.body.previous_secret_expires_at);
    assert.equal(await credentials(id, rotated.body.client_secret), 200);
    assert.equal(await credentials(id, created.body.client_secret), 200, 'the old secret, within the grace period');
    const now = await api('POST', `/clients/${id}/rotate-secret`);
    assert.equal(now.status, 200, JSON.stringify(now.body));
    assert.equal(now.body.previous_secret_expires_at, null);
    assert.equal(await credentials(id, rotated.body.client_secret), 401);

    const current = (await api('GET', `/clients/${id}`)).headers.get('etag')!;
    assert.equal((await api('DELETE', `/clients/${id}`, { headers: { 'if-match': '"old"' } })).status, 412);
    assert.equal((await api('DELETE', `/clients/${id}`, { headers: { 'if-match': current } })).status, 204);
    assert.equal((await api('GET', `/clients/${id}`)).status, 404);

    const actor = `client:${admin.clientId}`;
    for (const type of ['client.created', 'client.updated', 'client.secret_rotated', 'client.deleted']) {
      const events = await server.store.listEvents({ type: type as never, clientId: id, limit: 10 });
      assert.ok(events.length > 0 && events.every((e) => e.actor === actor), `${type} by ${actor}`);
    }
  });

  it('an admin client registers another admin client, whose token manages users', async () => {
    const made = await api('POST', '/clients', {
      body: { name: 'Ops', scope: 'admin', grant_types: ['client_credentials'], admin: true },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const response = await tokenRequest(
      server,
      { grant_type: 'client_credentials', scope: 'admin' },
      basic(made.body.client.client_id, made.body.client_secret),
    );
    const token = ((await response.json()) as { access_token: string }).access_token;
    const users = await caller(server.issuer, contract, token)('GET', '/users');
    assert.equal(users.status, 200);
  });

  it('registers, reads, changes and removes an API (RFC 8707 resource), each an event with its actor', async () => {
    const uri = 'https://api.example.com/orders';
    const path = `/resources/${encodeURIComponent(uri)}`;
    const created = await api('POST', '/resources', { body: { uri, scope: 'apps', name: 'Orders' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.headers.get('location'), `/admin/api/v1${path}`);
    assert.equal((await api('POST', '/resources', { body: { uri, scope: 'apps' } })).status, 409);
    assert.equal((await api('POST', '/resources', { body: { uri: 'ftp://x', scope: 'apps' } })).status, 400);
    assert.equal((await api('POST', '/resources', { body: { uri: `${uri}/2`, scope: 'openid' } })).status, 400);
    const listed = await api('GET', '/resources');
    assert.deepEqual(
      listed.body.items.map((r: { uri: string }) => r.uri),
      [uri],
    );
    const read = await api('GET', path);
    assert.equal(read.body.name, 'Orders');
    const etag = read.headers.get('etag')!;
    const patched = await api('PATCH', path, { headers: { 'if-match': etag }, body: { scope: 'apps webhooks' } });
    assert.equal(patched.body.scope, 'apps webhooks');
    assert.equal((await api('DELETE', path, { headers: { 'if-match': etag } })).status, 412);
    assert.equal((await api('DELETE', path)).status, 204);
    assert.equal((await api('GET', path)).status, 404);
    for (const type of ['resource.created', 'resource.updated', 'resource.deleted']) {
      const [event] = await server.store.listEvents({ type: type as never, limit: 1 });
      assert.equal(event!.actor, `client:${admin.clientId}`, type);
    }
  });

  it('webhooks: made (secret once), changed, secret rotated, tested, deliveries listed and redelivered, deleted; each an event with its actor', async () => {
    const made = await api('POST', '/webhooks', {
      body: { url: 'https://hooks.example.com/tessera', events: ['user.created'] },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.ok(made.body.secret);
    const id = made.body.webhook.id as string;
    assert.equal((await api('POST', '/webhooks', { body: { url: 'http://10.0.0.1/x', events: ['all'] } })).status, 400);
    const unknown = await api('POST', '/webhooks', { body: { url: 'https://h.example.com', events: ['user.nope'] } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /user\.nope/);

    await api('POST', '/users', { body: { username: 'ivy', email: 'ivy@example.com' } });
    const deliveries = await api('GET', `/webhooks/${id}/deliveries`);
    assert.equal(deliveries.status, 200);
    assert.deepEqual(
      deliveries.body.items.map((d: { event_type: string }) => d.event_type),
      ['user.created'],
    );

    const rotated = await api('POST', `/webhooks/${id}/rotate-secret`, { body: { grace: 60 } });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.notEqual(rotated.body.secret, made.body.secret);
    const until = Date.parse(rotated.body.previous_secret_until);
    assert.ok(Math.abs(until - Date.now() - 60_000) < 5_000, rotated.body.previous_secret_until);
    const byDefault = await api('POST', `/webhooks/${id}/rotate-secret`);
    assert.ok(Date.parse(byDefault.body.previous_secret_until) - Date.now() > 86_000_000, 'a day by default');
    assert.equal((await api('POST', `/webhooks/${id}/rotate-secret`, { body: { grace: -1 } })).status, 400);
    assert.equal((await api('POST', '/webhooks/wh_nope/rotate-secret', { body: {} })).status, 404);

    const tested = await api('POST', `/webhooks/${id}/test`);
    assert.equal(tested.status, 202, JSON.stringify(tested.body));
    assert.equal(tested.body.event_type, 'webhook.test');
    assert.equal((await api('POST', '/webhooks/wh_nope/test')).status, 404);

    const delivery = deliveries.body.items[0].id as string;
    const again = await api('POST', `/webhooks/${id}/deliveries/${delivery}/redeliver`);
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.deepEqual([again.body.id, again.body.event_type], [delivery, 'user.created']);
    assert.equal((await api('POST', `/webhooks/${id}/deliveries/nope/redeliver`)).status, 404);
    const other = (await api('POST', '/webhooks', { body: { url: 'https://other.example.com/x', events: ['all'] } }))
      .body.webhook.id as string;
    const elsewhere = await api('POST', `/webhooks/${other}/deliveries/${delivery}/redeliver`);
    assert.equal(elsewhere.status, 404, "another webhook's delivery");
    assert.match(elsewhere.headers.get('content-type')!, /^application\/problem\+json/);
    assert.equal((await api('DELETE', `/webhooks/${other}`)).status, 204);

    const [redelivered] = await server.store.listEvents({ type: 'webhook.redelivered', limit: 5 });
    assert.equal(redelivered?.data?.delivery, delivery, 'one redelivery: the one made');
    const [testedEvent] = await server.store.listEvents({ type: 'webhook.tested', limit: 1 });
    assert.deepEqual(testedEvent?.data, { webhook: id, delivery: tested.body.id });
    const rotations = await server.store.listEvents({ type: 'webhook.secret_rotated', limit: 5 });
    assert.deepEqual(
      rotations.map((e) => e.data?.grace),
      [86_400, 60],
      'each rotation made, newest first; none for the refused',
    );

    const read = await api('GET', `/webhooks/${id}`);
    assert.equal(read.body.secret, undefined);
    const etag = read.headers.get('etag')!;
    const patched = await api('PATCH', `/webhooks/${id}`, { headers: { 'if-match': etag }, body: { events: ['all'] } });
    assert.deepEqual(patched.body.events, ['all']);
    assert.ok((await api('GET', '/webhooks')).body.items.some((w: { id: string }) => w.id === id));
    assert.equal((await api('DELETE', `/webhooks/${id}`, { headers: { 'if-match': etag } })).status, 412);
    assert.equal((await api('DELETE', `/webhooks/${id}`)).status, 204);
    assert.equal((await api('GET', `/webhooks/${id}/deliveries`)).status, 404);
    const types = ['created', 'updated', 'deleted', 'secret_rotated', 'tested', 'redelivered'];
    for (const type of types.map((t) => `webhook.${t}`)) {
      const [event] = await server.store.listEvents({ type: type as never, limit: 1 });
      assert.equal(event!.actor, `client:${admin.clientId}`, type);
    }
  });

  it('upstream providers: added (the secret never shown), changed, deleted; an unreadable one is 502', async () => {
    const body = {
      type: 'oidc',
      id: 'corp',
      issuer: 'https://idp.example.com',
      client_id: 'tessera',
      client_secret: 's3cret',
    };
    const unread = await api('POST', '/providers', { body: { ...body, issuer: 'https://127.0.0.1:1' } });
    assert.equal(unread.status, 502, JSON.stringify(unread.body));
    assert.match(unread.body.detail, /discovery document/);
    const made = await api('POST', '/providers', { body: { ...body, check: false } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.callback_uri, `${server.issuer}/login/upstream/corp/callback`);
    assert.equal(JSON.stringify(made.body).includes('s3cret'), false);
    assert.equal((await api('POST', '/providers', { body: { ...body, check: false } })).status, 409);
    assert.equal((await api('POST', '/providers', { body: { ...body, id: 'x', issuer: 'not a url' } })).status, 400);
    const read = await api('GET', '/providers/corp');
    assert.equal(read.body.linked_accounts, 0);
    const patched = await api('PATCH', '/providers/corp', {
      headers: { 'if-match': read.headers.get('etag')! },
      body: { name: 'Corporate sign-in' },
    });
    assert.equal(patched.body.name, 'Corporate sign-in');
    assert.equal((await api('GET', '/providers')).body.items.length, 1);
    assert.equal(
      (await api('DELETE', '/providers/corp', { headers: { 'if-match': read.headers.get('etag')! } })).status,
      412,
    );
    assert.equal((await api('DELETE', '/providers/corp')).status, 204);
    assert.equal((await api('GET', '/providers/corp')).status, 404);
    for (const type of ['provider.created', 'provider.updated', 'provider.deleted']) {
      const [event] = await server.store.listEvents({ type: type as never, limit: 1 });
      assert.equal(event!.actor, `client:${admin.clientId}`, type);
    }
  });

  it('bad settings are 400 with the rule broken, unknown clients 404', async () => {
    const cases: Array<[string, string, unknown, number, RegExp?]> = [
      ['POST', '/clients', { name: 'x', scope: 'openid' }, 400, /redirect-uri/],
      ['POST', '/clients', { name: 'x', scope: 'nonsense', redirect_uris: ['https://x.example/cb'] }, 400, /scope/],
      ['POST', '/clients', { name: 'x', scope: 'openid', redirect_uris: ['http://x.example/cb'] }, 400, /redirect/],
      ['POST', '/clients', { name: 'x', scope: 'openid', grant_types: ['password'] }, 400, /grant-types/],
      ['POST', '/clients', { name: 'x', scope: 'openid', redirect_uris: 'https://x' }, 400],
      ['PATCH', '/clients/nope', { name: 'y' }, 404],
      ['DELETE', '/clients/nope', undefined, 404],
      ['POST', '/clients/nope/rotate-secret', {}, 404],
      ['POST', `/clients/${server.clients.public.id}/rotate-secret`, {}, 400, /public/],
      ['POST', `/clients/${server.clients.confidential.id}/rotate-secret`, { grace: -1 }, 400],
      ['PATCH', `/clients/${server.clients.confidential.id}`, { access_token_ttl: 10 ** 9 }, 400, /at most/],
    ];
    for (const [method, path, body, status, detail] of cases) {
      const answer = await api(method, path, body === undefined ? {} : { body });
      assert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      if (detail) assert.match(answer.body.detail, detail);
    }
  });

  it('every route of clients, resources, webhooks and providers in the document was called and its answers checked', () => {
    const documented = Object.entries(contract.document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const ours = documented.filter((route) => /\/(clients|resources|webhooks|providers)/.test(route));
    assert.ok(ours.some((route) => route.endsWith('/redeliver')));
    assert.deepEqual(
      ours.filter((route) => !contract.checked.has(route)),
      [],
    );
  });
});
