// Online guessing throttled, through the real sign-in form and the real token, revocation and
// introspection endpoints, with the clock injected: growing delays, then a lock, refused before the
// password is hashed; a browser that signed in before keeps its way in; per address across accounts;
// `tessera users unlock`; counters shared by two app instances over one database.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { passwordStats } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { freshThrottles, secondInstance } from '../helpers/bursts.ts';
import { cliIo, startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

/** Submits the account page's sign-in form: the status, and Retry-After when refused. */
async function signIn(browser: BrowserSim, username: string, password: string) {
  const page = await (await browser.request('/account/login')).text();
  const response = await browser.request('/account/login', {
    form: { csrf: BrowserSim.hidden(page, 'csrf'), username, password },
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`sign-in and client authentication throttled (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    let hashed: { verified: number };
    before(async () => {
      if (skip) return;
      server = await startServer(database ? { databaseUrl: database.url } : {});
    });
    after(async () => {
      if (server) delete server.clock.frozen;
      await server?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      if (skip) return;
      // A frozen clock, moved by the tests; every test starts outside the last one's window.
      await freshThrottles(server);
      hashed = passwordStats();
    });

    it(
      '30 fast wrong passwords: delays after 5, a lock at 20, refused before hashing; then unlock',
      { skip },
      async () => {
        const attacker = new BrowserSim(server.issuer);
        const statuses: number[] = [];
        for (let i = 0; i < 30; i++) statuses.push((await signIn(attacker, 'alice', `guess ${i}`)).status);
        // 5 free failures, then every fast attempt waits (1 s, 2 s, …): refused with 429.
        assert.deepEqual(statuses.slice(0, 5), [303, 303, 303, 303, 303]);
        assert.ok(
          statuses.slice(5).every((s) => s === 429),
          String(statuses),
        );
        assert.equal(passwordStats().verified - hashed.verified, 5, 'the refused attempts hashed nothing');
        // The delay grows with every failure that got through: wait it out each time, up to the lock.
        let refused = await signIn(attacker, 'alice', 'again');
        for (let failures = 5; failures < 20; failures++) {
          assert.equal(refused.status, 429);
          server.clock.offset += Number(refused.retryAfter);
          assert.equal((await signIn(attacker, 'alice', `wrong ${failures}`)).status, 303);
          refused = await signIn(attacker, 'alice', 'again');
        }
        assert.equal(refused.status, 429);
        assert.equal(refused.retryAfter, '900');
        assert.match(refused.body, /Too many failed sign-ins: signing in is locked\. Try again in 15 minutes\./);
        // Locked: even the right password is refused, and unhashed, so the answer says nothing of it.
        const before = passwordStats().verified;
        const right = await signIn(attacker, 'alice', server.user.password);
        assert.equal(right.status, 429);
        assert.doesNotMatch(right.body, /Incorrect/);
        assert.equal(passwordStats().verified, before);
        const events = await server.store.listEvents({ userId: server.user.id, limit: 200 });
        assert.equal(events.filter((e) => e.type === 'user.locked').length, 1);
        assert.ok(events.some((e) => e.type === 'user.sign_in_throttled' && e.data?.locked === true));

        // The lock ends with its time, or with tessera users unlock.
        const { io } = cliIo(server);
        assert.equal(await run(['users', 'unlock', 'alice'], io), 0);
        assert.equal((await signIn(attacker, 'alice', server.user.password)).status, 303);
        assert.equal((await server.store.listEvents({ type: 'user.unlocked', limit: 1 })).length, 1);
      },
    );

    it('a browser that signed in before keeps its way in while someone elsewhere is locked out', { skip }, async () => {
      const owner = new BrowserSim(server.issuer);
      assert.equal((await signIn(owner, 'alice', server.user.password)).status, 303);
      assert.ok(owner.cookies.has('tessera_device'));
      const attacker = new BrowserSim(server.issuer);
      for (let i = 0; i < 25; i++) await signIn(attacker, 'alice', `guess ${i}`);
      assert.equal((await signIn(attacker, 'alice', server.user.password)).status, 429);
      // The owner's device counts its own failures: a typo, then the right password.
      assert.equal((await signIn(owner, 'alice', 'typo')).status, 303);
      assert.equal((await signIn(owner, 'alice', server.user.password)).status, 303);
      // A device cookie is the owner's alone: planted for another user, or forged, it counts for nothing.
      const forger = new BrowserSim(server.issuer);
      forger.cookies.set('tessera_device', owner.cookies.get('tessera_device')!.replace(/^[^.]+/, 'forged'));
      assert.equal((await signIn(forger, 'alice', server.user.password)).status, 429);
    });

    it('per source address, across accounts (credential stuffing)', { skip }, async () => {
      const browser = new BrowserSim(server.issuer);
      // 50 free failures per address, spread over accounts that are each below their own limit.
      for (let i = 0; i < 50; i++) assert.equal((await signIn(browser, `user-${i % 25}`, 'x')).status, 303);
      const refused = await signIn(browser, 'someone-else', 'x');
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfter, '1');
      server.clock.offset += 1;
      assert.equal((await signIn(browser, 'someone-else', 'x')).status, 303);
    });

    it(
      'client authentication: 429 with Retry-After at the token, revocation and introspection endpoints',
      { skip },
      async () => {
        const c = server.clients.confidential;
        const wrong = basic(c.id, 'not the secret');
        const token = (auth: string) => tokenRequest(server, { grant_type: 'refresh_token', refresh_token: 'x' }, auth);
        const form = (path: string, auth: string) =>
          fetch(`${server.issuer}${path}`, {
            method: 'POST',
            headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ token: 'x' }),
          });
        for (let i = 0; i < 5; i++) assert.equal((await token(wrong)).status, 401);
        for (const response of [
          await token(wrong),
          await form('/oauth2/revoke', wrong),
          await form('/oauth2/introspect', wrong),
        ]) {
          assert.equal(response.status, 429);
          assert.equal(response.headers.get('retry-after'), '1');
          assert.equal(((await response.json()) as { error: string }).error, 'temporarily_unavailable');
        }
        // Refused before the secret is compared: the right one waits too, then works and clears the count.
        assert.equal((await token(basic(c.id, c.secret!))).status, 429);
        server.clock.offset += 1;
        assert.equal(
          (await token(basic(c.id, c.secret!))).status,
          400,
          'authenticated: the refresh token is what is wrong',
        );
        assert.equal((await token(wrong)).status, 401, 'the count started again');
        const metrics = await (await fetch(`${server.issuer}/metrics`)).text();
        assert.match(metrics, /^tessera_client_auth_failures_total\{outcome="throttled"\} [1-9]/m);
        assert.match(metrics, /^tessera_signin_failures_total\{outcome="wrong",reason="wrong_password"\} [1-9]/m);
      },
    );

    it('counters are shared: failures at one instance lock the account at another', { skip }, async () => {
      // Another instance: its own connections to the same database.
      const { app: other, close } = await secondInstance(server);
      try {
        const attempt = async (app: typeof other | undefined, i: number) => {
          if (!app) return (await signIn(new BrowserSim(server.issuer), 'alice', `guess ${i}`)).status;
          const page = await app.inject({ url: '/account/login' });
          const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
          const cookie = page.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
          const body = new URLSearchParams({ csrf, username: 'alice', password: `guess ${i}` }).toString();
          const headers = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
          return (await app.inject({ method: 'POST', url: '/account/login', headers, body })).statusCode;
        };
        for (let i = 0; i < 5; i++) assert.equal(await attempt(i % 2 === 0 ? other : undefined, i), 303);
        assert.equal(await attempt(other, 5), 429);
        assert.equal(await attempt(undefined, 6), 429);
      } finally {
        await close();
      }
    });
  });
}
