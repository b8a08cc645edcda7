// The admin console on PostgreSQL, over HTTP (the Chromium suite, ./admin-console.test.ts, runs on
// SQLite): an admin (TESSERA_ADMIN_MFA=off, a password alone) finds a locked user, unlocks them and
// signs them out everywhere, each form with its token; the event log, filtered, names the actor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { changeUserRoles } from '../../src/admin/roles.ts';
import { ADMIN_ROLE } from '../../src/store/users.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

describe('the admin console on PostgreSQL', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  let server: TestServer;
  before(async () => {
    if (database) server = await startServer({ databaseUrl: database.url, env: { TESSERA_ADMIN_MFA: 'off' } });
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  it(
    'search, unlock, sign out everywhere, and the event log',
    { skip: !database && 'PostgreSQL unreachable' },
    async () => {
      const now = Math.floor(Date.now() / 1000);
      const admin = await newUser(server);
      await changeUserRoles(server.store, admin.username, { add: [ADMIN_ROLE] }, { now });
      const bob = await newUser(server);
      const subject = bob.username.toLowerCase();
      for (let i = 0; i < 25; i++)
        await server.store.recordFailures({ keys: [{ key: `account:${subject}`, subject }], now, window: 3600 });
      const sim = new BrowserSim(server.issuer);
      assert.equal((await passwordSignIn(sim, admin)).headers.get('location'), '/account');

      const found = await (await sim.request(`/admin/users?q=${bob.username.toUpperCase()}`)).text();
      assert.match(found, new RegExp(`<a href="/admin/users/${bob.id}">${bob.username}</a>`));
      const page = await (await sim.request(`/admin/users/${bob.id}`)).text();
      assert.match(page, /Sign-in locked until/);
      const csrf = BrowserSim.hidden(page, 'csrf');
      for (const action of ['unlock', 'sign-out']) {
        const done = await sim.request(`/admin/users/${bob.id}/${action}`, { form: { csrf } });
        assert.equal(done.status, 303, action);
      }
      assert.match(await (await sim.request(`/admin/users/${bob.id}?done=unlocked`)).text(), /Sign-in open/);
      const log = await (await sim.request(`/admin/events?type=user.unlocked&user=${bob.username}`)).text();
      assert.match(log, new RegExp(`user:${admin.id} \\(${admin.username}\\)`));
      const [unlocked] = await server.store.listEvents({ userId: bob.id, type: 'user.unlocked' });
      assert.equal(unlocked?.actor, `user:${admin.id}`);
    },
  );
});
