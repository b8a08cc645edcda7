// Users' slow receivers hold up neither the operator's deliveries nor another user's, on SQLite and
// PostgreSQL: two users point ten webhooks each at receivers of their own (twenty hosts) that hang
// until the test releases them, with a backlog of their sign-ins queued first; the operator's
// delivery of a third user's sign-in, and that user's own webhook's, arrive while every slow receiver
// still hangs, and no slow receiver has more than two requests open at once. The worker runs as in
// production (start(), its own interval); a receiver's timeout (10 s) is never reached.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { securityEvent } from '../../src/events/index.ts';
import { WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { cliIo, PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { accessTokenOf } from '../helpers/tokens.ts';
import { Receiver, until } from '../helpers/webhook-receiver.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`webhook lanes with receivers that hang (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let delivery: WebhookDelivery | undefined;
    const slow = Array.from({ length: 20 }, () => new Receiver(true));
    const fast = new Receiver(false);
    const operator = new Receiver(false);

    before(async () => {
      if (skip) return;
      const env = { TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
      server = await startServer({ ...(database ? { databaseUrl: database.url } : {}), env });
      for (const receiver of [...slow, fast, operator]) await receiver.start();
    });
    after(async () => {
      for (const receiver of slow) receiver.answer();
      await delivery?.stop();
      for (const receiver of [...slow, fast, operator]) await receiver.stop();
      await server?.close();
      await database?.drop();
    });

    it("neither the operator's delivery nor another user's waits for them", { skip }, async () => {
      const ids: Record<string, string> = {};
      for (const username of ['mallory', 'trudy', 'carol']) {
        const passwordHash = await hashPassword(PASSWORD);
        ids[username] = (
          await createUser(server.store, null, { username, email: `${username}@x.example`, passwordHash })
        ).id;
      }
      const subscribe = async (username: string, url: string) => {
        const token = await accessTokenOf(server, { username, password: PASSWORD }, 'openid webhooks');
        const created = await fetch(`${server.issuer}/api/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url, events: ['user.signed_in'] }),
        });
        assert.equal(created.status, 201);
      };
      for (let i = 0; i < 20; i++) await subscribe(i < 10 ? 'mallory' : 'trudy', slow[i]!.url);
      await subscribe('carol', fast.url);
      const { io, lines } = cliIo(server);
      io.env = { ...io.env, TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true' };
      const args = ['webhooks', 'create', '--url', operator.url, '--events', 'user.signed_in'];
      assert.equal(await run(args, io), 0, lines.join('\n'));

      // A backlog: five sign-ins each of mallory and trudy (a hundred slow deliveries, besides those of
      // the sign-ins that got their tokens), due before carol's.
      const now = Math.floor(Date.now() / 1000);
      for (let n = 0; n < 5; n++) {
        for (const username of ['mallory', 'trudy']) {
          await server.store.recordEvent(securityEvent('user.signed_in', now - 60 + n, { userId: ids[username]! }));
        }
      }
      const carols = securityEvent('user.signed_in', now, { userId: ids.carol! });
      await server.store.recordEvent(carols);

      delivery = new WebhookDelivery(server.store, {
        secret: server.secret,
        allowPrivate: true,
        interval: 0.05,
        log: { info() {}, warn() {}, error() {} },
      });
      delivery.start();
      const hasCarols = (receiver: Receiver) => receiver.received.some((body) => body.includes(carols.id));
      await until(() => hasCarols(operator), "the operator's delivery of carol's sign-in");
      await until(() => hasCarols(fast), "carol's own webhook's delivery");
      await until(() => slow.every((r) => r.open > 0), 'every slow receiver reached');
      for (const [i, receiver] of slow.entries()) {
        assert.equal(receiver.held.length, receiver.open, `slow receiver ${i} still hangs`);
        assert.ok(receiver.mostOpen <= 2, `slow receiver ${i}: at most 2 requests at once (${receiver.mostOpen})`);
      }
      // Released, the slow receivers get their deliveries in turn.
      for (const receiver of slow) receiver.answer();
      const db = await server.db();
      const pending = async () =>
        (await db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute()).length;
      await until(async () => (await pending()) === 0, 'the backlog delivered', 20_000);
      assert.ok(slow.every((r) => r.received.length >= 5));
    });
  });
}
