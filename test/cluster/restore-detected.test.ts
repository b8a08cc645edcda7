// Restores made without `tessera restore-finish` are detected (docs/backup.md#restores-detected):
// a SQLite file copied back by hand under a stopped instance, found behind the mark the previous
// start left beside it; and a PostgreSQL database replaced with an older dump under running
// instances, which notice within their check interval and fence it once between them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { type Cluster, type Instance, startCluster, startInstance } from '../helpers/instances.ts';
import { clusterFlows, logLine } from '../helpers/restore-flows.ts';
import { withPostgresDatabase, withSqliteDatabase } from '../store/databases.ts';

/** Waits until `read` answers more than `than`. */
async function until(read: () => Promise<number> | number, than: number, what: string) {
  for (const deadline = Date.now() + 20_000; (await read()) <= than; await sleep(100))
    assert.ok(Date.now() < deadline, what);
}

describe('a SQLite file copied back under a stopped instance', async () => {
  const db = await withSqliteDatabase();
  let cluster: Cluster | undefined;
  let instance: Instance | undefined;
  after(async () => {
    await cluster?.stop();
    await instance?.stop();
    await db.drop();
  });

  it('is found behind the mark the previous start left, and fenced at start', async () => {
    const file = db.url.slice('sqlite:'.length);
    const env = { TESSERA_RESTORE_CHECK_INTERVAL: '1' };
    cluster = await startCluster(db.url, { count: 1, env });
    const flows = clusterFlows(cluster);
    const revoked = await flows.tokens();
    const counter = (path: string) => {
      const sqlite = new DatabaseSync(path, { readOnly: true });
      try {
        return Number((sqlite.prepare('select counter from restore_watch').get() as { counter: number }).counter);
      } finally {
        sqlite.close();
      }
    };
    // A copy by hand while the instance runs, as `sqlite3 tessera.db ".backup copy.db"` makes one.
    const copy = join(file, '..', 'copy.db');
    const source = new DatabaseSync(file);
    source.exec(`VACUUM INTO '${copy}'`);
    source.close();
    const mark = `${file}-restore-watch`;
    await until(
      () => (existsSync(mark) ? JSON.parse(readFileSync(mark, 'utf8')).counter : 0),
      counter(copy),
      'a check after the copy',
    );
    await flows.revoke(revoked.refresh_token);
    // The instance stopped; the balancer stays on the issuer's port (no port left free meanwhile).
    for (const stopped of cluster.instances) await stopped.stop();

    // Put back by hand, the database's own files moved aside, the mark beside them left as it is.
    for (const name of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(name)) renameSync(name, `${name}.before`);
    renameSync(copy, file);
    instance = await startInstance(cluster.env);
    const line = await logLine(instance, 'restored database detected');
    assert.deepEqual(line.detected, ['mark']);
    assert.equal(line.seenBy, 'the previous start here');
    cluster.balancer.replaceBackends([instance.url]);
    assert.deepEqual(await flows.refresh(revoked.refresh_token), { status: 400, error: 'invalid_grant' });
    const events = flows.restoredEvents();
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data.detected, ['mark']);
    const fresh = await flows.tokens();
    assert.equal((await flows.refresh(fresh.refresh_token)).status, 200);
  });
});

describe('a PostgreSQL database replaced with an older dump under running instances', async () => {
  const db = await withPostgresDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'tessera-dump-'));
  let cluster: Cluster | undefined;
  after(async () => {
    await cluster?.stop();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is noticed within the check interval and fenced once', { skip: !db && 'PostgreSQL unreachable' }, async () => {
    cluster = await startCluster(db!.url, {
      count: 2,
      env: { TESSERA_RESTORE_CHECK_INTERVAL: '1', LOG_LEVEL: 'info', TESSERA_DATA_DIR: dir },
    });
    const flows = clusterFlows(cluster);
    const revoked = await flows.tokens();
    const client = new pg.Client({ connectionString: db!.url });
    await client.connect();
    try {
      const counter = async () =>
        Number((await client.query<{ counter: string }>('select counter from restore_watch')).rows[0]!.counter);
      // An operator's own dump (not `tessera backup`), then a check of the instances after it.
      const dump = join(dir, 'dump.sql');
      const dumped = spawnSync('pg_dump', ['--clean', '--if-exists', `--file=${dump}`, db!.url], { encoding: 'utf8' });
      assert.equal(dumped.status, 0, dumped.stderr);
      await until(counter, await counter(), 'a check after the dump');
      await flows.revoke(revoked.refresh_token);

      const loaded = spawnSync(
        'psql',
        ['--quiet', '--single-transaction', '-v', 'ON_ERROR_STOP=1', `--dbname=${db!.url}`, `--file=${dump}`],
        { encoding: 'utf8' },
      );
      assert.equal(loaded.status, 0, loaded.stderr);
    } finally {
      await client.end();
    }
    const said = () => cluster!.instances.filter((i) => i.output().includes('restored database detected'));
    for (const deadline = Date.now() + 20_000; said().length === 0; await sleep(50))
      assert.ok(Date.now() < deadline, 'a running instance noticed');
    const [fencer] = said();
    const line = await logLine(fencer!, 'restored database detected');
    assert.deepEqual(line.detected, ['mark']);
    assert.equal(line.seenBy, 'this instance');
    // The other instance takes the fence up at its next check, and fences nothing itself.
    const other = cluster.instances.find((i) => i !== fencer)!;
    const taken = () =>
      other.output().includes('fenced since the last check') ||
      other.output().includes('another instance fenced it first');
    for (const deadline = Date.now() + 20_000; !taken(); await sleep(50))
      assert.ok(Date.now() < deadline, `the other instance took the fence up: ${other.output()}`);
    assert.equal(said().length, 1, 'one instance fenced');
    assert.equal(flows.restoredEvents().length, 1, 'once');

    assert.deepEqual(await flows.refresh(revoked.refresh_token), { status: 400, error: 'invalid_grant' });
    // Through both instances (the balancer alternates): new keys, codes of the new epoch.
    for (let i = 0; i < 2; i++) {
      const fresh = await flows.tokens();
      assert.equal((await flows.refresh(fresh.refresh_token)).status, 200);
      const userinfo = await fetch(`${cluster.issuer}/oauth2/userinfo`, {
        headers: { authorization: `Bearer ${fresh.access_token}` },
      });
      assert.equal(userinfo.status, 200);
    }
  });
});
