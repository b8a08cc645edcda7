// RestoreWatch (src/restores/watch.ts) over a real SQLite store: a fault of the database during a
// check is no detection, and a timeline this role may not read is said once and never fails a check.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { RestoreWatch } from '../../src/restores/watch.ts';
import { DatabaseUnavailable } from '../../src/store/faults.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { withSqliteDatabase } from '../store/databases.ts';

const db = await withSqliteDatabase();
let store: Store;
before(async () => {
  store = await openStore(db.url);
  await store.migrate();
});
after(async () => {
  await store.close();
  await db.drop();
});

function recorder() {
  const lines: Array<{ level: string; msg: string }> = [];
  const at = (level: string) => (_obj: object, msg: string) => lines.push({ level, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

it('takes a fault of the database during a check for no restore', async () => {
  const file = `${db.url.slice('sqlite:'.length)}-restore-watch`;
  const { lines, log } = recorder();
  let failures = 1;
  const faulty = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'readRestoreWatch' && failures-- > 0)
        return () => Promise.reject(new DatabaseUnavailable(new Error('connection lost')));
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const watch = new RestoreWatch(faulty, { file, fenceNewTimeline: true, log });
  assert.deepEqual(await watch.check(), {});
  assert.match(lines[0]!.msg, /restore check failed \(the database's fault, not a restore\)/);
  assert.equal(existsSync(file), false, 'nothing remembered from a failed check');
  assert.deepEqual(await watch.check(), {});
  assert.equal(await watch.check().then(() => watch.epoch), '');
  assert.equal((await store.listEvents({ type: 'database.restored' })).length, 0);
  assert.equal(lines.length, 1);
});

it('says once that the timeline cannot be read, and checks the mark all the same', async () => {
  const { lines, log } = recorder();
  const denied = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'databaseTimeline')
        return () => Promise.reject(new Error('permission denied for function pg_current_wal_lsn'));
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const watch = new RestoreWatch(denied, { file: undefined, fenceNewTimeline: true, log });
  const before = (await store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 1 })).counter;
  for (let i = 0; i < 3; i++) assert.deepEqual(await watch.check(), {});
  assert.equal((await store.readRestoreWatch({ newDatabase: 'x', knownEpoch: '', now: 1 })).counter, before + 3);
  assert.deepEqual(
    lines.map((l) => l.level),
    ['warn'],
  );
  assert.match(lines[0]!.msg, /cannot read PostgreSQL's timeline \(permission denied.*docs\/postgresql\.md/);
});
