// Where the admin API is served, and the main flow on PostgreSQL. By default it is on the operations
// listener (TESSERA_METRICS_PORT) beside /metrics, and not on the public one; TESSERA_ADMIN_API=off
// serves it nowhere. On PostgreSQL, an admin client made with the CLI manages users and clients, each
// write an event naming it, every answer checked against the OpenAPI document.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/index.ts';
import { adminApiOnOperations, buildOperationsApp } from '../../src/http/operations.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';
import { adminClient, caller, contractOf, PREFIX } from '../helpers/admin-api.ts';
import { freePort, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

describe('admin API on the operations listener', () => {
  let server: TestServer;
  let operations: FastifyInstance;
  let base: string;

  before(async () => {
    server = await startServer({ env: { TESSERA_METRICS_TOKEN: 'a-metrics-token-of-16+' } });
    const port = await freePort();
    const config = { ...server.config, metrics: { ...server.config.metrics, port } };
    const adminApi = { config, store: server.store, keys: server.keys, secret: server.secret, now: server.keys.now };
    operations = await buildOperationsApp({ config, registry: server.app.metricsRegistry, adminApi });
    await operations.listen({ port, host: '127.0.0.1' });
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await operations?.close();
    await server?.close();
  });

  it('serves the admin API and /metrics (with its token), and the public listener serves neither', async () => {
    const admin = await adminClient(server);
    const contract = await contractOf(base);
    const users = await caller(base, contract, admin.token)('GET', '/users');
    assert.equal(users.status, 200);
    assert.equal((await fetch(`${base}/metrics`)).status, 401);
    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer a-metrics-token-of-16+' } });
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /tessera_http_requests_total/);
    assert.equal((await fetch(`${server.issuer}${PREFIX}/openapi.json`)).status, 404);
    const publicAnswer = await fetch(`${server.issuer}${PREFIX}/users`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    assert.equal(publicAnswer.status, 404);
  });

  it('TESSERA_ADMIN_API says where: operations only with its listener, off nowhere', () => {
    const env = { NODE_ENV: 'test', TESSERA_ISSUER: 'http://127.0.0.1:1', TESSERA_SECRET: 'x'.repeat(43) };
    assert.equal(adminApiOnOperations(loadConfig({ ...env, TESSERA_METRICS_PORT: '9464' })), true);
    assert.equal(adminApiOnOperations(loadConfig(env)), false);
    const off = loadConfig({ ...env, TESSERA_METRICS_PORT: '9464', TESSERA_ADMIN_API: 'off' });
    assert.equal(adminApiOnOperations(off), false);
    assert.throws(() => loadConfig({ ...env, TESSERA_ADMIN_API: 'everywhere' }), /TESSERA_ADMIN_API/);
  });
});

describe('admin API on PostgreSQL', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  let server: TestServer;
  before(async () => {
    if (database) server = await startServer({ databaseUrl: database.url, env: { TESSERA_ADMIN_API: 'public' } });
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  it('an admin client manages users and clients; every write an event naming it', { skip }, async () => {
    const admin = await adminClient(server);
    const api = caller(server.issuer, await contractOf(server.issuer), admin.token);
    const user = await api('POST', '/users', {
      body: { username: 'hana', email: 'hana@example.com', password: PASSWORD },
    });
    assert.equal(user.status, 201);
    const page = await api('GET', '/users?q=hana&limit=1');
    assert.equal(page.body.items[0].id, user.body.id);
    const etag = (await api('GET', `/users/${user.body.id}`)).headers.get('etag')!;
    const patch = { name: 'Hana', roles: ['ops'], disabled: true };
    const patched = await api('PATCH', `/users/${user.body.id}`, { headers: { 'if-match': etag }, body: patch });
    assert.deepEqual([patched.body.name, patched.body.roles, patched.body.disabled], ['Hana', ['ops'], true]);
    assert.equal(
      (await api('PATCH', `/users/${user.body.id}`, { headers: { 'if-match': etag }, body: patch })).status,
      412,
    );

    await exchange(server, await getCode(server, server.clients.confidential));
    const signedOut = await api('POST', `/users/${server.user.id}/sign-out`);
    assert.ok(signedOut.body.grants >= 1);

    const client = await api('POST', '/clients', {
      body: { name: 'Reports', scope: 'openid', grant_types: ['client_credentials'] },
    });
    assert.equal(client.status, 201);
    const id = client.body.client.client_id as string;
    const rotated = await api('POST', `/clients/${id}/rotate-secret`, { body: { grace: 60 } });
    for (const secret of [client.body.client_secret, rotated.body.client_secret]) {
      const answer = await tokenRequest(server, { grant_type: 'client_credentials' }, basic(id, secret));
      assert.equal(answer.status, 200);
    }
    assert.equal((await api('DELETE', `/clients/${id}`)).status, 204);

    const events = await api('GET', `/events?limit=50`);
    const mine = events.body.items.filter((e: { actor: string }) => e.actor === `client:${admin.clientId}`);
    const types = new Set(mine.map((e: { type: string }) => e.type));
    for (const type of ['user.created', 'user.updated', 'user.roles_changed', 'user.disabled', 'token.revoked']) {
      assert.ok(types.has(type), `${type} by the admin client`);
    }
    for (const type of ['client.created', 'client.secret_rotated', 'client.deleted']) assert.ok(types.has(type), type);
  });
});
