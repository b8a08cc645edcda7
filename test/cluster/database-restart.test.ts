// PostgreSQL stopped for 5 s under load, with two instances on it (a cluster of the test's own, on
// its own port): both instances keep running, answer 503 meanwhile (never 500, never a dropped
// connection), and serve again within 10 s of the database's return; no token chain breaks.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startCluster, type Cluster } from '../helpers/instances.ts';
import { createPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import type { TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

describe('PostgreSQL restarted under load, two instances', async () => {
  const pg: PgCluster | undefined = await createPgCluster();
  let database: TestDatabase | undefined;
  let cluster: Cluster;
  before(async () => {
    if (!pg) return;
    database = await withPostgresDatabase(pg.adminUrl);
    // A refresh whose commit was lost with its answer is sent again, and gets the current token.
    cluster = await startCluster(database!.url, { env: { TESSERA_REFRESH_TOKEN_REUSE_INTERVAL: '30' } });
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop().catch(() => {});
    pg?.destroy();
  });

  it('both instances survive a 5 s stop and serve again within 10 s', { skip: !pg }, async () => {
    const via = (url: string) =>
      ({ issuer: url, user: cluster.user, clients: cluster.clients }) as unknown as TestServer;
    const c = cluster.clients.confidential;
    const browser = new BrowserSim(cluster.issuer);
    const chains: Array<{ refresh_token: string }> = [];
    for (let i = 0; i < 4; i++) {
      const issued = await getCode(via(cluster.issuer), c, { browser });
      chains.push((await (await exchange(via(cluster.issuer), issued)).json()) as { refresh_token: string });
    }
    const urls = cluster.instances.map((instance) => instance.url);
    const statuses = new Map<number | string, number>();
    let running = true;
    // Each chain refreshes on both instances in turn, keeping its token until a refresh succeeds.
    const load = chains.map(async (chain, i) => {
      for (let n = i; running; n++) {
        const response = await tokenRequest(
          via(urls[n % urls.length]!),
          { grant_type: 'refresh_token', refresh_token: chain.refresh_token },
          basic(c.id, c.secret!),
        ).catch((err: Error) => err);
        const status = response instanceof Error ? `${response.message}: ${String(response.cause)}` : response.status;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (response instanceof Error) continue;
        if (response.status === 200) Object.assign(chain, await response.json());
        else await response.body?.cancel();
        await sleep(10);
      }
    });
    try {
      await sleep(500);
      pg!.stop();
      await sleep(5_000);
      for (const url of urls) assert.equal((await fetch(`${url}/readyz`)).status, 503);
      pg!.start();
      const back = Date.now();
      for (const url of urls) {
        while ((await fetch(`${url}/readyz`)).status !== 200) {
          assert.ok(Date.now() - back < 10_000, `${url} ready again within 10 s`);
          await sleep(100);
        }
      }
      const before = statuses.get(200) ?? 0;
      while ((statuses.get(200) ?? 0) < before + 8) {
        assert.ok(Date.now() - back < 10_000, 'refreshes succeed again within 10 s');
        await sleep(50);
      }
    } finally {
      running = false;
      await Promise.all(load);
    }
    assert.ok(
      cluster.instances.every((instance) => !instance.exited()),
      'both instances are running',
    );
    assert.deepEqual(
      [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
      [],
      `statuses: ${JSON.stringify([...statuses])}`,
    );
    assert.ok(statuses.get(503)! > 0);
    for (const instance of cluster.instances) assert.doesNotMatch(instance.output(), /Unhandled|uncaught|FATAL/i);
  });
});
