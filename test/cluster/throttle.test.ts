// Two instances (real processes) over one PostgreSQL database share the throttle's counts (issue
// 39): twenty right passwords of one account sent at once, spread over both, all get in, while sixty
// wrong ones of another account, spread over both, get the allowance checked and no more. The lock
// comes with the free failures here, so that the allowance does not depend on how long the burst takes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { preparedSignIn, tally } from '../helpers/bursts.ts';
import { startCluster, type Cluster } from '../helpers/instances.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

describe('two instances over one PostgreSQL database share the throttle', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  let cluster: Cluster;
  before(async () => {
    if (!database) return;
    const env = { TESSERA_SIGNIN_FREE_FAILURES: '5', TESSERA_SIGNIN_LOCK_AFTER: '5' };
    cluster = await startCluster(database.url, { env });
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  it('20 right passwords at once all get in, 60 wrong ones get 5 checked, over both', { skip }, async () => {
    const urls = cluster.instances.map((instance) => instance.url);
    const right = [];
    const wrong = [];
    for (let i = 0; i < 20; i++) right.push(await preparedSignIn(urls[i % 2]!, 'alice', cluster.user.password));
    // Unknown usernames are throttled as known ones are.
    for (let i = 0; i < 60; i++) wrong.push(await preparedSignIn(urls[i % 2]!, 'bob', `guess ${i}`));
    const [alice, bob] = await Promise.all([
      Promise.all(right.map((attempt) => attempt())),
      Promise.all(wrong.map((attempt) => attempt())),
    ]);
    assert.deepEqual(tally(alice), { in: 20 }, 'no right password refused');
    assert.deepEqual(tally(bob), { 303: 5, 429: 55 }, 'five wrong ones checked, over both instances');
  });
});
