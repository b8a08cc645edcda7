// The restore watch's store (src/store/restore-watch.ts) on SQLite and PostgreSQL: the mark made
// once, bumped only while the database is the one read, and a detected restore fenced once however
// many instances write the fence at the same moment, and not at all once the database moved on.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { securityEvent } from '../../src/events/index.ts';
import type { Store } from '../../src/store/index.ts';
import type { FenceConditions } from '../../src/store/restore-watch.ts';
import { closeStore, migratedStore, withPostgresDatabase, withSqliteDatabase } from './databases.ts';

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`the restore watch on ${name}`, async () => {
    const db = await database();
    let store: Store;
    before(async () => {
      if (db) store = await migratedStore(db);
    });
    after(() => closeStore(store, db));
    const skip = !db && `${name} unreachable`;
    let fences = 0;
    const fence = (when: FenceConditions, timeline: number | null = null) => {
      const id = `fence-${++fences}`;
      const event = securityEvent('database.restored', 100, {
        requester: { ip: null, userAgent: 'test' },
        data: { fence: id, finished_by: 'detection' },
      });
      return store.fenceDetectedRestore({ id, now: 100 + fences, event, when, timeline, by: 'test' });
    };

    it('makes the mark once and bumps it only while the database is the one read', { skip }, async () => {
      const first = await store.readRestoreWatch({ newDatabase: 'db-1', knownEpoch: '', now: 1 });
      assert.deepEqual(first, {
        database: 'db-1',
        counter: 0,
        timeline: null,
        epoch: '',
        pending: false,
        knows: true,
        markedBy: null,
      });
      const again = await store.readRestoreWatch({ newDatabase: 'db-2', knownEpoch: 'nowhere', now: 2 });
      assert.equal(again.database, 'db-1', 'the identity stays');
      assert.equal(again.knows, false, 'a fence the database never had');
      assert.equal(await store.markActivity({ database: 'db-1', atLeast: 0, timeline: 1, now: 3, by: 'test' }), 1);
      assert.equal(await store.markActivity({ database: 'db-1', atLeast: 1, timeline: null, now: 4, by: 'test' }), 2);
      assert.equal(
        await store.markActivity({ database: 'db-1', atLeast: 5, timeline: null, now: 5, by: 'test' }),
        undefined,
      );
      assert.equal(
        await store.markActivity({ database: 'db-9', atLeast: 0, timeline: null, now: 5, by: 'test' }),
        undefined,
      );
      const state = await store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 6 });
      assert.equal(state.counter, 2);
      assert.equal(state.timeline, 1, 'recorded, and kept by a bump that has none');
    });

    it('fences once when instances write the fence at the same moment', { skip }, async () => {
      const seen = { database: 'db-1', counter: 10, epoch: '' };
      const results = await Promise.all([
        fence({ epoch: '', seen }),
        fence({ epoch: '', seen }),
        fence({ epoch: '', seen }),
      ]);
      const made = results.filter((r) => r.fence);
      assert.equal(made.length, 1, 'one fence');
      assert.equal(await store.restoreEpoch(), made[0]!.fence!.id);
      assert.equal((await store.listEvents({ type: 'database.restored' })).length, 1);
      assert.ok(results.every((r) => r.database === 'db-1' && r.counter > 2));
    });

    it('fences nothing once the database moved on, nor a mark not behind', { skip }, async () => {
      const epoch = await store.restoreEpoch();
      const counter = (await store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 7 })).counter;
      // Read before the fence: another fence came since.
      assert.equal((await fence({ epoch: '', seen: { database: 'db-1', counter: 99, epoch: '' } })).fence, undefined);
      // The mark is not behind what was seen, and the fence seen is there.
      assert.equal((await fence({ epoch, seen: { database: 'db-1', counter, epoch } })).fence, undefined);
      // Another database's mark.
      assert.equal((await fence({ epoch, seen: { database: 'db-9', counter: 99, epoch } })).fence, undefined);
      assert.equal(await store.restoreEpoch(), epoch);
    });

    it('fences a database whose fence seen is gone, and one on a newer timeline, once each', { skip }, async () => {
      let epoch = await store.restoreEpoch();
      const gone = await fence({ epoch, seen: { database: 'db-1', counter: 0, epoch: 'a-fence-it-never-had' } });
      assert.ok(gone.fence);
      epoch = gone.fence.id;
      const newer = await fence({ epoch, timeline: 2 }, 2);
      assert.ok(newer.fence, 'timeline 2 after 1');
      epoch = newer.fence.id;
      assert.equal((await fence({ epoch, timeline: 2 }, 2)).fence, undefined, 'timeline 2 is now the one recorded');
      assert.equal((await store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 8 })).timeline, 2);
      assert.equal((await store.listEvents({ type: 'database.restored' })).length, 3);
      // `tessera restore-finish` records the timeline it fenced on: the next check fences nothing more.
      await store.recordTimeline(3);
      assert.equal((await fence({ epoch, timeline: 3 }, 3)).fence, undefined);
      assert.equal((await store.listEvents({ type: 'database.restored' })).length, 3);
    });

    it(
      'fences the counter an instance wrote when another wrote it since, not when it wrote it itself',
      { skip },
      async () => {
        const epoch = await store.restoreEpoch();
        const read = () => store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 9 });
        const before = await read();
        const counter = await store.markActivity({
          database: 'db-1',
          atLeast: before.counter,
          timeline: null,
          now: 10,
          by: 'a',
        });
        assert.equal((await read()).markedBy, 'a');
        const seen = { database: 'db-1', counter: counter!, epoch, by: 'a' };
        assert.equal((await fence({ epoch, seen })).fence, undefined, 'its own bump');
        // As a restore to one less, then another instance's bump, leave it: the same counter, by b.
        const db = (store as unknown as { db: import('kysely').Kysely<never> }).db;
        await sql`update restore_watch set counter = ${counter}, marked_by = 'b'`.execute(db);
        const rewritten = await fence({ epoch, seen });
        assert.ok(rewritten.fence, 'fenced');
        assert.equal((await read()).markedBy, 'test', 'the fencer bumped it last');
      },
    );
  });
}
