// What the operator's commands and alerts ask of the store, on SQLite and PostgreSQL alike: users
// searched in any letter case and paged by username, a profile written with its events, the events
// of one request, the accounts locked now, the webhook backlog, the migrations pending.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { User } from '../../src/store/users.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const POLICY = { freeFailures: 2, lockAfter: 3, lockSeconds: 900, window: 3600 };

const user = (username: string, overrides: Partial<User> = {}): User => ({
  id: newId(),
  username,
  email: `${username}@example.com`,
  emailVerified: true,
  name: null,
  givenName: null,
  familyName: null,
  passwordHash: null,
  disabled: false,
  createdAt: NOW,
  roles: [],
  updatedAt: NOW,
  ...overrides,
});

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`the operator's queries on ${name}`, () => {
    let database: TestDatabase | undefined;
    let store: Store;

    before(async () => {
      database = await open();
      if (!database) return;
      store = await openStore(database.url);
      await store.migrate();
      for (const u of [
        user('ann'),
        user('Anna-Lena', { email: 'al@example.org' }),
        user('bob', { name: 'Bob Annerl' }),
        user('carl', { email: 'carl@ANN.example' }),
        user('dan_100%'),
        user('dora'),
      ])
        await store.createUser(u);
    });
    after(async () => {
      await store?.close();
      await database?.drop();
    });

    it('searches username, email and name in any letter case; LIKE characters match themselves', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const names = async (query: Parameters<Store['searchUsers']>[0]) =>
        (await store.searchUsers(query)).map((u) => u.username);
      // The order is the database's for the username (its collation): compared as a set here.
      assert.deepEqual((await names({ search: 'ANN' })).sort(), ['Anna-Lena', 'ann', 'bob', 'carl']);
      assert.deepEqual(await names({ search: '0%' }), ['dan_100%']);
      assert.deepEqual(await names({ search: '_' }), ['dan_100%']);
      assert.deepEqual(await names({ search: 'n%' }), []);
      const all = await names({});
      assert.equal(all.length, 6);
      // Pages by the last username shown: together, every user once, in the order of the whole.
      const first = await names({ limit: 4 });
      const rest = await names({ after: first.at(-1)!, limit: 4 });
      assert.deepEqual([...first, ...rest], all);
    });

    it('writes a profile with its events; an event keeps its request id and is found by it', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const dora = (await store.getUserByUsername('dora'))!;
      const requester = { ip: '203.0.113.4', userAgent: 'test', requestId: 'req-7f3a' };
      const event = securityEvent('user.updated', NOW, { userId: dora.id, requester, data: { changed: ['email'] } });
      const changed = { ...dora, email: 'dora@new.example', emailVerified: false, updatedAt: NOW + 1 };
      assert.equal(await store.updateUserProfile(changed, [event]), true);
      assert.deepEqual(await store.getUserById(dora.id), changed);
      const [found] = await store.listEvents({ requestId: 'req-7f3a' });
      assert.deepEqual(found, event);
      assert.deepEqual(await store.listEvents({ requestId: 'req-other' }), []);
      assert.equal(await store.updateUserProfile({ ...changed, id: 'nobody' }, []), false);
    });

    it('counts the accounts locked now, not a device, nor a lock that is over', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const fail = async (key: string, subject: string, times: number, at: number) => {
        for (let i = 0; i < times; i++)
          await store.recordFailures({ keys: [{ key, subject }], now: at, window: POLICY.window });
      };
      await fail('account:ann', 'ann', 3, NOW);
      await fail('second-factor:ann', 'ann', 3, NOW);
      await fail('second-factor:bob', 'bob', 3, NOW);
      await fail('account:carl', 'carl', 2, NOW);
      await fail('device:d1:dora', 'dora', 3, NOW);
      await fail('account:old', 'old', 3, NOW - POLICY.lockSeconds - 1);
      assert.equal(await store.countLockedAccounts(NOW + 10, POLICY), 2, 'ann (once) and bob');
      assert.equal(await store.countLockedAccounts(NOW + POLICY.lockSeconds + 1, POLICY), 0, 'the locks are over');
    });

    it('says the webhook backlog: deliveries not yet made and the oldest one', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      assert.deepEqual(await store.deliveryBacklog(), { pending: 0, oldestCreatedAt: null });
      const webhook = {
        id: newId(),
        url: 'https://hooks.example.com/',
        events: 'user.locked',
        ownerId: null,
        secretEnc: 'sealed',
        previousSecretEnc: null,
        previousUntil: null,
        createdAt: NOW,
      };
      assert.equal(await store.createWebhook(webhook), true);
      await store.recordEvent(securityEvent('user.locked', NOW + 5, {}));
      await store.recordEvent(securityEvent('user.locked', NOW + 9, {}));
      await store.recordEvent(securityEvent('user.unlocked', NOW + 9, {}));
      const backlog = await store.deliveryBacklog();
      assert.equal(backlog.pending, 2);
      assert.ok(backlog.oldestCreatedAt !== null && backlog.oldestCreatedAt <= NOW + 5);
    });

    it('says which migrations are pending: none once migrated', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const status = await store.migrationStatus();
      assert.deepEqual([status.pending, status.newer], [[], []]);
    });
  });
}
