// Two instances (real processes) over one PostgreSQL database share the throttle's counts (issue
// 39): twenty right passwords of one account sent at once, spread over both, all get in, while sixty
// wrong ones of another account, spread over both, get the allowance checked and no more. The lock
// comes with the free failures here, so that the allowance does not depend on how long the burst takes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startCluster, type Cluster } from '../helpers/instances.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

/** A sign-in form loaded from `url`, ready to be posted there: where it sends the browser. */
async function preparedSignIn(url: string, username: string, password: string) {
  const browser = new BrowserSim(url);
  const page = await (await browser.request('/account/login')).text();
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const body = new URLSearchParams({ csrf: BrowserSim.hidden(page, 'csrf'), username, password });
  const headers = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
  return async () => {
    const response = await fetch(`${url}/account/login`, { method: 'POST', redirect: 'manual', headers, body });
    await response.body?.cancel();
    return response.status === 303 && response.headers.get('location') === '/account' ? 'in' : String(response.status);
  };
}

function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

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
