// The operator's webhook operations that write outside a webhook's own row (src/admin/webhooks.ts), on
// SQLite and PostgreSQL alike: a rotated secret, a test delivery and a redelivery are each written
// with their event and its actor, and an event only when the row it is about is there.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NotFoundError } from '../../src/admin/errors.ts';
import { redeliver, rotateWebhookSecret, testWebhook } from '../../src/admin/webhooks.ts';
import { securityEvent } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import { createWebhook, openWebhookSecret } from '../../src/webhooks/subscriptions.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const SECRET = 'a-test-secret-of-at-least-32-characters!';
const requester = { ip: null, userAgent: 'test', actor: 'client:ops' };

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  const onStore = (title: string, body: (store: Store) => Promise<void>) =>
    it(title, async (t) => {
      const database = await open();
      if (!database) return t.skip('no PostgreSQL');
      const store = await openStore(database.url);
      try {
        await store.migrate();
        await body(store);
      } finally {
        await store.close();
        await database.drop();
      }
    });
  const actors = async (store: Store, type: 'webhook.secret_rotated' | 'webhook.tested' | 'webhook.redelivered') =>
    (await store.listEvents({ type, limit: 10 })).map((e) => e.actor);

  describe(`webhook operations on ${name}`, () => {
    onStore('rotate, test and redeliver, each with its event; none for what is not there', async (store) => {
      const input = {
        url: 'https://hooks.example.com/x',
        events: ['user.created'],
        ownerId: null,
        allowPrivate: false,
      };
      const { webhook } = await createWebhook(store, SECRET, input, NOW, requester);

      const rotated = await rotateWebhookSecret(store, SECRET, webhook, 60, { now: NOW, requester });
      const stored = (await store.getWebhook(webhook.id))!;
      assert.equal(openWebhookSecret(stored.secretEnc, SECRET), rotated.secret);
      assert.equal(stored.previousSecretEnc, webhook.secretEnc);
      assert.equal(stored.previousUntil, NOW + 60);
      assert.deepEqual(await actors(store, 'webhook.secret_rotated'), ['client:ops']);
      const gone = securityEvent('webhook.secret_rotated', NOW, { requester });
      const secrets = { secretEnc: 'x', previousSecretEnc: 'y', previousUntil: NOW };
      assert.equal(await store.rotateWebhookSecret('wh_gone', secrets, gone), false);
      assert.deepEqual(await actors(store, 'webhook.secret_rotated'), ['client:ops'], 'no event for no webhook');

      const test = await testWebhook(store, webhook, { now: NOW, requester });
      assert.equal((await store.getDelivery(test.id))?.eventType, 'webhook.test');
      assert.equal(JSON.parse(test.payload).data.actor, 'client:ops');
      assert.deepEqual(await actors(store, 'webhook.tested'), ['client:ops']);

      const again = await redeliver(store, test.id, { now: NOW + 5, requester, webhookId: webhook.id });
      assert.equal(again.nextAttemptAt, NOW + 5);
      assert.deepEqual(await actors(store, 'webhook.redelivered'), ['client:ops']);
      await assert.rejects(redeliver(store, 'nope', { now: NOW, requester }), NotFoundError);
      await assert.rejects(redeliver(store, test.id, { now: NOW, requester, webhookId: 'wh_other' }), NotFoundError);
      const absent = securityEvent('webhook.redelivered', NOW, { requester });
      assert.equal(await store.redeliver('nope', NOW, absent), false);
      assert.deepEqual(await actors(store, 'webhook.redelivered'), ['client:ops'], 'no event for no delivery');
    });
  });
}
