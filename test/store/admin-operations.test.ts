// The operations the CLI and the admin console share (src/admin/support.ts, src/admin/events.ts), on
// SQLite and PostgreSQL alike: each support action records its event with the actor it was given,
// and the event log pages newest first by a cursor, events of the same second in order, none twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminError } from '../../src/admin/errors.ts';
import { listEventPage } from '../../src/admin/events.ts';
import { lockInForce, signInLocks } from '../../src/admin/sign-in-locks.ts';
import { disableUser, enableUser, signOutEverywhere, unlockUser } from '../../src/admin/support.ts';
import { CLI, type Requester, securityEvent } from '../../src/events/index.ts';
import type { Store } from '../../src/store/store.ts';
import { newId } from '../../src/tokens/opaque.ts';
import { userRecord } from '../helpers/users.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase, type TestDatabase } from './databases.ts';

const NOW = 1_800_000_000;
const POLICY = { freeFailures: 1, lockAfter: 2, lockSeconds: 900, window: 3600 };
const ADMIN: Requester = { ip: '192.0.2.7', userAgent: 'Firefox', actor: 'user:admin-1' };

for (const [name, open] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`the admin operations on ${name}`, () => {
    let database: TestDatabase | undefined;
    let store: Store;

    before(async () => {
      database = await open();
      if (database) store = await migratedStore(database);
    });
    after(() => closeStore(store, database));

    it('support actions record their events with the actor given; the command line is `cli`', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const user = userRecord({ id: newId(), username: `u-${newId().slice(0, 6)}` });
      await store.createUser(user);
      const subject = user.username.toLowerCase();
      for (const at of [NOW, NOW + 1])
        await store.recordFailures({ keys: [{ key: `account:${subject}`, subject }], now: at, window: 3600 });
      assert.equal(lockInForce(await signInLocks(store, POLICY, user, NOW + 2))?.state, 'locked');
      assert.deepEqual(await unlockUser(store, user, { now: NOW + 3, requester: ADMIN }), { unlocked: true });
      assert.equal(lockInForce(await signInLocks(store, POLICY, user, NOW + 4)), undefined);
      assert.deepEqual(await unlockUser(store, user, { now: NOW + 4 }), { unlocked: false });
      await disableUser(store, user, { now: NOW + 5, requester: ADMIN });
      assert.equal((await store.getUserById(user.id))?.disabled, true);
      await enableUser(store, user, { now: NOW + 6, requester: ADMIN });
      assert.equal((await store.getUserById(user.id))?.disabled, false);
      const factors = [{ method: 'password', amr: ['pwd'], at: NOW + 7 }];
      const session = { id: newId(), userId: user.id, authTime: NOW + 7, factors, createdAt: NOW + 7 };
      await store.createSession({ ...session, expiresAt: NOW + 86_400 });
      const ended = await signOutEverywhere(store, user, { now: NOW + 8, requester: ADMIN });
      assert.deepEqual(ended, { sessions: 1, grants: 0, linked: [] });
      assert.deepEqual(await store.listSessionsOf(user.id, NOW + 9), []);
      const events = (await store.listEvents({ userId: user.id })).reverse();
      assert.deepEqual(
        events.map((e) => [e.type, e.actor, e.ip]),
        [
          ['user.unlocked', 'user:admin-1', '192.0.2.7'],
          ['user.unlocked', CLI.actor, null],
          ['user.disabled', 'user:admin-1', '192.0.2.7'],
          ['user.enabled', 'user:admin-1', '192.0.2.7'],
          ['user.signed_out', 'user:admin-1', '192.0.2.7'],
        ],
      );
    });

    it('the event log pages newest first by a cursor, the same second in order, none twice', async (t) => {
      if (!database) return t.skip('no PostgreSQL');
      const clientId = `c-${newId().slice(0, 8)}`;
      // Seven events over three seconds: pages of three split a second.
      for (const at of [NOW, NOW, NOW + 1, NOW + 1, NOW + 1, NOW + 2, NOW + 2])
        await store.recordEvent(securityEvent('client.updated', at, { clientId, requester: ADMIN }));
      // The database's own order (newest first, then by id), all at once.
      const all = await store.listEvents({ clientId });
      assert.deepEqual(
        all.map((e) => e.at),
        [NOW + 2, NOW + 2, NOW + 1, NOW + 1, NOW + 1, NOW, NOW],
      );
      const expected = all.map((e) => e.id);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const page = await listEventPage(store, { client: clientId, limit: 3, ...(cursor ? { cursor } : {}) }, NOW);
        seen.push(...page.events.map((e) => e.id));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      assert.deepEqual(seen, expected);
      const typed = await listEventPage(store, { client: clientId, type: 'client.deleted', limit: 10 }, NOW);
      assert.deepEqual(typed, { events: [], nextCursor: null });
      await assert.rejects(listEventPage(store, { cursor: 'bm90IGEgY3Vyc29y', limit: 10 }, NOW), AdminError);
      await assert.rejects(listEventPage(store, { type: 'user.exploded', limit: 10 }, NOW), AdminError);
    });
  });
}
