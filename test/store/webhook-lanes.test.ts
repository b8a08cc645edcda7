// The webhook outbox's claims (src/store/webhooks.ts), on SQLite and PostgreSQL alike: the operator's
// deliveries and users' are claimed apart; within users' lane the claim goes round the webhooks and
// takes no more of one webhook than it may have leased at once, across instances; a disabled user's
// webhooks get no deliveries for what happens while disabled, and what was queued waits until the
// user is enabled again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { Delivery, Webhook } from '../../src/store/webhooks.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';
import { userRecord } from '../helpers/users.ts';

const NOW = 1_800_000_000;
const OPERATOR = { operator: true, perWebhook: 50 };
const USERS = { operator: false, perWebhook: 2 };

const user = (id: string) => userRecord({ id });

const webhook = (id: string, ownerId: string | null): Webhook => ({
  id,
  url: `https://${id}.example/hook`,
  events: 'user.signed_in',
  ownerId,
  secretEnc: 'x',
  previousSecretEnc: null,
  previousUntil: null,
  createdAt: NOW,
});

const delivery = (id: string, webhookId: string, at = NOW): Delivery => ({
  id,
  webhookId,
  eventId: id,
  eventType: 'user.signed_in',
  payload: '{}',
  status: 'pending',
  attempts: 0,
  retryBase: 0,
  nextAttemptAt: at,
  lockedUntil: null,
  createdAt: at,
  lastStatus: null,
  lastError: null,
  finishedAt: null,
});

const ids = (claimed: Delivery[]) => claimed.map((d) => d.id).sort();

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  /** A test on a database of its own: each claim sees only what the test queued. */
  const onStore = (title: string, body: (store: Store, other: Store) => Promise<void>) =>
    it(title, async (t) => {
      const database = await open();
      if (!database) return t.skip('no PostgreSQL');
      const store = await openStore(database.url);
      const other = await openStore(database.url);
      try {
        await store.migrate();
        await store.createUser(user('alice'));
        await store.createUser(user('bob'));
        await body(store, other);
      } finally {
        await other.close();
        await store.close();
        await database.drop();
      }
    });

  describe(`webhook lanes on ${name}`, () => {
    onStore("claims the operator's deliveries and users' apart", async (store) => {
      await store.createWebhook(webhook('wh_op', null));
      await store.createWebhook(webhook('wh_alice', 'alice'));
      // Users' deliveries queued first: the operator's lane takes its own all the same.
      for (let i = 0; i < 5; i++) await store.enqueueDelivery(delivery(`a${i}`, 'wh_alice', NOW - 10));
      await store.enqueueDelivery(delivery('op', 'wh_op'));
      assert.deepEqual(ids(await store.claimDeliveries(NOW, 60, 1, OPERATOR)), ['op']);
      assert.deepEqual(ids(await store.claimDeliveries(NOW, 60, 10, { ...USERS, perWebhook: 10 })), [
        'a0',
        'a1',
        'a2',
        'a3',
        'a4',
      ]);
      assert.deepEqual(await store.claimDeliveries(NOW, 60, 10, OPERATOR), []);
    });

    onStore("goes round users' webhooks, and takes no more of one than it may have under way", async (store) => {
      for (const id of ['wh_slow1', 'wh_slow2']) await store.createWebhook(webhook(id, 'alice'));
      await store.createWebhook(webhook('wh_fast', 'bob'));
      // Two slow webhooks with a backlog, due long before the fast one's delivery.
      for (let i = 0; i < 20; i++) {
        await store.enqueueDelivery(delivery(`s1-${i}`, 'wh_slow1', NOW - 100 + i));
        await store.enqueueDelivery(delivery(`s2-${i}`, 'wh_slow2', NOW - 100 + i));
      }
      await store.enqueueDelivery(delivery('fast', 'wh_fast'));
      // One of each first: the fast webhook's delivery is in the first three taken.
      assert.deepEqual(ids(await store.claimDeliveries(NOW, 60, 3, USERS)), ['fast', 's1-0', 's2-0']);
      // Then the second of each slow one, and no more: each has two leased.
      assert.deepEqual(ids(await store.claimDeliveries(NOW + 1, 60, 10, USERS)), ['s1-1', 's2-1']);
      assert.deepEqual(await store.claimDeliveries(NOW + 2, 60, 10, USERS), []);
      // One attempt recorded: one more turn for that webhook.
      const at = NOW + 3;
      await store.recordAttempt(
        { deliveryId: 's1-0', attempt: 1, at, status: 204, durationMs: 5, error: null },
        { status: 'delivered' },
      );
      assert.deepEqual(ids(await store.claimDeliveries(NOW + 4, 60, 10, USERS)), ['s1-2']);
      // Leases that ran out (an instance died) count no more: those taken at NOW and NOW + 1 are due
      // again, s1-2's still counts.
      const retaken = await store.claimDeliveries(NOW + 61, 60, 10, USERS);
      assert.deepEqual(ids(retaken), ['fast', 's1-1', 's2-0', 's2-1']);
      // The webhooks asked to be skipped (their host busy here) are passed over.
      await store.enqueueDelivery(delivery('fast-2', 'wh_fast'));
      const skip = ['wh_slow1', 'wh_slow2'];
      assert.deepEqual(ids(await store.claimDeliveries(NOW + 62, 60, 10, { ...USERS, skip })), ['fast-2']);
    });

    onStore('counts what other instances hold, and gives each delivery to one claimer', async (store, other) => {
      for (let w = 0; w < 5; w++) {
        await store.createWebhook(webhook(`wh_${w}`, 'alice'));
        for (let i = 0; i < 10; i++) await store.enqueueDelivery(delivery(`d${w}-${i}`, `wh_${w}`));
      }
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).claimDeliveries(NOW, 60, 4, USERS)),
      );
      const taken = claims.flat().map((d) => d.id);
      assert.equal(new Set(taken).size, taken.length, 'no delivery claimed twice');
      // Afterwards, none is left to take while two of each webhook are leased.
      const after = await Promise.all([
        store.claimDeliveries(NOW, 60, 50, USERS),
        other.claimDeliveries(NOW, 60, 50, USERS),
      ]);
      const leased = [...taken, ...after.flat().map((d) => d.id)];
      for (let w = 0; w < 5; w++) {
        const of = leased.filter((id) => id.startsWith(`d${w}-`)).length;
        assert.ok(of >= 2, `webhook ${w}: ${of} leased`);
      }
      assert.deepEqual(await store.claimDeliveries(NOW, 60, 50, USERS), []);
    });

    onStore("a disabled user's webhooks hear nothing while disabled, and deliver again once enabled", async (store) => {
      await store.createWebhook(webhook('wh_alice', 'alice'));
      await store.createWebhook(webhook('wh_op', null));
      await store.enqueueDelivery(delivery('queued', 'wh_alice'));
      const disabled = securityEvent('user.disabled', NOW, { userId: 'alice' });
      assert.equal(await store.setUserDisabled('alice', true, NOW, disabled), true);
      // What happens while disabled reaches the operator's webhook only.
      const signedIn = securityEvent('user.signed_in', NOW, { userId: 'alice' });
      await store.recordEvent(signedIn);
      assert.equal((await store.listDeliveries('wh_alice', 10)).length, 1);
      assert.equal((await store.listDeliveries('wh_op', 10)).length, 1);
      // What was queued before waits.
      assert.deepEqual(await store.claimDeliveries(NOW, 60, 10, USERS), []);
      assert.equal(await store.setUserDisabled('alice', false, NOW + 1), true);
      assert.deepEqual(ids(await store.claimDeliveries(NOW + 1, 60, 10, USERS)), ['queued']);
      // And what happens next is delivered again.
      await store.recordEvent(securityEvent('user.signed_in', NOW + 2, { userId: 'alice' }));
      assert.equal((await store.listDeliveries('wh_alice', 10)).length, 2);
    });
  });
}
