// A webhook subscribed to `all` (`tessera webhooks create --events all`, or `"events": ["all"]` on
// /api/webhooks) gets every event type, those the catalogue gains later too: it is stored as a
// wildcard, not as the list of today's types. On SQLite and PostgreSQL (the match is in SQL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { type EventType, securityEvent } from '../../src/events/index.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { cliIo, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { accessTokenOf } from '../helpers/tokens.ts';
import { Receiver, until } from '../helpers/webhook-receiver.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

async function cli(server: TestServer, args: string[]): Promise<{ code: number; out: string }> {
  const { io, lines } = cliIo(server);
  io.env = { ...io.env, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
  const code = await run(args, io);
  return { code, out: lines.join('\n') };
}

const typesOf = (receiver: Receiver) => receiver.received.map((body) => (JSON.parse(body) as { type: string }).type);

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`webhooks subscribed to all (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let delivery: WebhookDelivery;
    const operator = new Receiver(false);
    const users = new Receiver(false);
    const log = { info() {}, warn() {}, error() {} };

    before(async () => {
      if (skip) return;
      const env = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
      server = await startServer({ ...(database ? { databaseUrl: database.url } : {}), env });
      await operator.start();
      await users.start();
      const now = () => Math.floor(Date.now() / 1000);
      delivery = new WebhookDelivery(server.store, {
        secret: server.secret,
        allowPrivate: true,
        interval: 1,
        now,
        log,
      });
    });
    after(async () => {
      await delivery?.stop();
      await operator.stop();
      await users.stop();
      await server?.close();
      await database?.drop();
    });

    const deliver = async () => {
      while ((await delivery.runOnce()) > 0);
    };

    it(
      "the operator's: stored as a wildcard, shown as all, and every type arrives, one the catalogue lacks too",
      { skip },
      async () => {
        const created = await cli(server, ['webhooks', 'create', '--url', operator.url, '--events', 'all', '--json']);
        assert.equal(created.code, 0, created.out);
        const hook = JSON.parse(created.out) as { id: string; events: string[] };
        assert.deepEqual(hook.events, ['all']);
        const db = await server.db();
        const stored = await sql<{ events: string }>`select events from webhooks where id = ${hook.id}`.execute(db);
        assert.equal(stored.rows[0]?.events, '*', 'not expanded into the types of today');
        const shown = await cli(server, ['webhooks', 'show', hook.id, '--json']);
        assert.deepEqual((JSON.parse(shown.out) as { events: string[] }).events, ['all']);
        assert.match((await cli(server, ['webhooks', 'list'])).out, new RegExp(`${hook.id} .* all$`, 'm'));

        const now = Math.floor(Date.now() / 1000);
        await server.store.recordEvent(securityEvent('user.locked', now, { userId: server.user.id }));
        await server.store.recordEvent(securityEvent('client.created', now, { data: { client_id: 'x' } }));
        // A type added to the catalogue after the webhook was made: the wildcard takes it too.
        const later = 'user.type_added_later' as EventType;
        await server.store.recordEvent(securityEvent(later, now, { userId: server.user.id }));
        await deliver();
        const expected = ['client.created', 'user.locked', later];
        await until(() => expected.every((type) => typesOf(operator).includes(type)), expected.join(', '));
      },
    );

    it('the CLI: all stands alone, and an unknown type names it', { skip }, async () => {
      const mixed = await cli(server, ['webhooks', 'create', '--url', operator.url, '--events', 'all,user.locked']);
      assert.equal(mixed.code, 2);
      assert.match(mixed.out, /"all" stands alone/);
      const unknown = await cli(server, ['webhooks', 'create', '--url', operator.url, '--events', 'everything']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.out, /"everything" is not an event type; .*; or all, alone, for every type/);
      const updated = await cli(server, [
        'webhooks',
        'create',
        '--url',
        operator.url,
        '--events',
        'user.locked',
        '--json',
      ]);
      const id = (JSON.parse(updated.out) as { id: string }).id;
      const widened = await cli(server, ['webhooks', 'update', id, '--events', 'all', '--json']);
      assert.equal(widened.code, 0, widened.out);
      assert.deepEqual((JSON.parse(widened.out) as { events: string[] }).events, ['all']);
      await cli(server, ['webhooks', 'delete', id]);
    });

    it("a user's, through /api/webhooks: every event about the user", { skip }, async () => {
      const passwordHash = await hashPassword(PASSWORD);
      const dora = await createUser(server.store, null, { username: 'dora', email: 'dora@x.example', passwordHash });
      const token = await accessTokenOf(server, { username: 'dora', password: PASSWORD }, 'openid webhooks');
      const post = (events: unknown) =>
        fetch(`${server.issuer}/api/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: users.url, events }),
        });
      const refused = await post(['all', 'user.locked']);
      assert.equal(refused.status, 400);
      const created = await post(['all']);
      assert.equal(created.status, 201);
      assert.deepEqual(((await created.json()) as { events: string[] }).events, ['all']);
      users.received.length = 0;
      const now = Math.floor(Date.now() / 1000);
      await server.store.recordEvent(securityEvent('user.locked', now, { userId: dora.id }));
      await server.store.recordEvent(securityEvent('user.locked', now, { userId: server.user.id }));
      await deliver();
      await until(() => typesOf(users).includes('user.locked'), "dora's user.locked");
      const about = users.received.map((body) => (JSON.parse(body) as { data: { user_id?: string } }).data.user_id);
      assert.deepEqual([...new Set(about)], [dora.id], "only dora's events, as for any user's webhook");
    });
  });
}
