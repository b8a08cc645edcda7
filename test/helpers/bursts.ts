// Bursts against the throttles, as an attacker (or a crowd) sends them: sign-in forms loaded one by
// one and then posted all at once, a tally of what came back, a second instance of a test server on
// its database, and a throttle test's fresh start (a clock that stands still, no counts).
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/index.ts';
import { BrowserSim } from './browser-sim.ts';
import type { TestServer } from './server.ts';

/**
 * A sign-in form loaded from `url` in a browser of its own, ready to be posted to `origin` (another
 * instance on the same database, if given): `in` when it signed in, else the answer's status.
 */
export async function preparedSignIn(url: string, username: string, password: string, origin = url) {
  const browser = new BrowserSim(url);
  const page = await (await browser.request('/account/login')).text();
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const body = new URLSearchParams({ csrf: BrowserSim.hidden(page, 'csrf'), username, password });
  const headers = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
  return async () => {
    const response = await fetch(`${origin}/account/login`, { method: 'POST', redirect: 'manual', headers, body });
    await response.body?.cancel();
    return response.status === 303 && response.headers.get('location') === '/account' ? 'in' : String(response.status);
  };
}

/** How many times each outcome came back. */
export function tally(outcomes: Array<string | number>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

/** Another instance of `server`: its own connections to the same database, on its clock, listening on a free port. */
export async function secondInstance(server: TestServer) {
  const store = await openStore(server.config.databaseUrl, { thread: 'worker' });
  const app = await buildApp({
    config: server.config,
    store,
    keys: server.keys,
    secret: server.secret,
    logger: false,
    now: () => (server.clock.frozen ?? Math.floor(Date.now() / 1000)) + server.clock.offset,
  });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (err) {
    await app.close();
    await store.close();
    throw err;
  }
  return {
    app,
    origin: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/**
 * Each throttle test's start: a frozen clock (a delay of one second is not over halfway through a
 * burst), moved past the last test's window, and no counts left.
 */
export async function freshThrottles(server: TestServer): Promise<void> {
  server.clock.frozen = Math.floor(Date.now() / 1000);
  server.clock.offset += 100_000;
  await (await server.db()).deleteFrom('throttles').execute();
}
