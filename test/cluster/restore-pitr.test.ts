// A PostgreSQL point-in-time recovery, made as its operator makes one and without `tessera
// restore-finish`: Tessera finds the cluster on a new timeline at its next start and fences the
// database, so that a refresh token revoked after the recovery's target stays refused.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { type Cluster, type Instance, startCluster, startInstance } from '../helpers/instances.ts';
import { createPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import { clusterFlows, logLine } from '../helpers/restore-flows.ts';

describe('a point-in-time recovery of PostgreSQL, without restore-finish', async () => {
  const pgCluster: PgCluster | undefined = await createPgCluster({ archive: true });
  const dir = await mkdtemp(join(tmpdir(), 'tessera-pitr-'));
  let cluster: Cluster | undefined;
  let instance: Instance | undefined;
  after(async () => {
    await cluster?.stop();
    await instance?.stop();
    pgCluster?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'is found on its new timeline and fenced: a refresh token revoked after the target stays refused',
    { skip: !pgCluster && 'no PostgreSQL binaries' },
    async () => {
      const admin = new pg.Client({ connectionString: pgCluster!.adminUrl });
      admin.on('error', () => {});
      await admin.connect();
      await admin.query('CREATE DATABASE tessera');
      const url = pgCluster!.adminUrl.replace(/\/postgres$/, '/tessera');
      cluster = await startCluster(url, { count: 1, env: { TESSERA_DATA_DIR: dir } });
      const flows = clusterFlows(cluster);
      const kept = await flows.tokens();
      const revoked = await flows.tokens();

      let base: string;
      try {
        base = pgCluster!.baseBackup();
        await admin.query("select pg_create_restore_point('before-revocation')");
      } finally {
        await admin.end();
      }
      await flows.revoke(revoked.refresh_token);
      assert.equal((await flows.refresh(revoked.refresh_token)).error, 'invalid_grant');

      // The operator's recovery: every instance stopped, the cluster recovered to the restore point.
      // The balancer stays on the issuer's port, and the instance comes back on a new one: no port is
      // left free for another test's process to take meanwhile.
      for (const stopped of cluster.instances) await stopped.stop();
      await pgCluster!.recoverTo(base, 'before-revocation');

      instance = await startInstance(cluster.env);
      const line = await logLine(instance, 'restored database detected');
      assert.equal(line.level, 40, 'at warn');
      assert.deepEqual(line.detected, ['timeline'], 'by the timeline: the activity mark is as the instance left it');
      assert.equal(line.timeline, 2);
      assert.equal(line.recordedTimeline, 1);

      cluster.balancer.replaceBackends([instance.url]);
      {
        for (const [what, token] of [
          ['revoked after the target', revoked.refresh_token],
          ['issued before the base backup', kept.refresh_token],
        ] as const) {
          assert.deepEqual(await flows.refresh(token), { status: 400, error: 'invalid_grant' }, what);
        }
        const events = flows.restoredEvents();
        assert.equal(events.length, 1);
        assert.equal(events[0]!.data.finished_by, 'detection');
        const fresh = await flows.tokens();
        assert.equal((await flows.refresh(fresh.refresh_token)).status, 200, 'users sign in again');
      }
    },
  );
});
