// Throttles that hold when raced, as the attacker raced them, on SQLite and PostgreSQL: sixty wrong
// passwords sent at once (and split over two instances), thirty at the account page's password form,
// forty registrations against a limit of twenty, a burst of wrong client secrets, one IPv6 /64
// rotating its addresses, and five failures with a client's id locking that client out elsewhere.
// Password checks are counted (the hashing's own counter and the sign_in_failed events), never timed.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { passwordStats } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { freshThrottles, preparedSignIn, secondInstance, tally } from '../helpers/bursts.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, tokenRequest } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`throttles raced (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    before(async () => {
      if (skip) return;
      const env = { TESSERA_TRUST_PROXY: 'loopback', TESSERA_REGISTRATION: 'open', TESSERA_REGISTRATION_LIMIT: '20' };
      server = await startServer({ ...(database ? { databaseUrl: database.url } : {}), env });
    });
    after(async () => {
      if (server) delete server.clock.frozen;
      await server?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      if (!skip) await freshThrottles(server);
    });

    const failures = async () => (await server.store.listEvents({ type: 'user.sign_in_failed', limit: 1000 })).length;

    it('60 wrong passwords at once: the allowance is checked, the rest refused unchecked', { skip }, async () => {
      const attempts = [];
      for (let i = 0; i < 60; i++) attempts.push(await preparedSignIn(server.issuer, 'alice', `guess ${i}`));
      const [verified, failed] = [passwordStats().verified, await failures()];
      const statuses = await Promise.all(attempts.map((attempt) => attempt()));
      assert.deepEqual(tally(statuses), { 303: 5, 429: 55 });
      assert.equal(passwordStats().verified - verified, 5, 'five passwords hashed and compared');
      assert.equal((await failures()) - failed, 5);
    });

    it('split over two instances of one database, still the allowance', { skip }, async () => {
      const other = await secondInstance(server);
      try {
        const attempts = [];
        for (let i = 0; i < 60; i++) {
          attempts.push(
            await preparedSignIn(server.issuer, 'alice', `guess ${i}`, i % 2 ? other.origin : server.issuer),
          );
        }
        const verified = passwordStats().verified;
        const statuses = await Promise.all(attempts.map((attempt) => attempt()));
        assert.deepEqual(tally(statuses), { 303: 5, 429: 55 });
        assert.equal(passwordStats().verified - verified, 5);
      } finally {
        await other.close();
      }
    });

    it("30 wrong current passwords at once at the account page's form", { skip }, async () => {
      const browser = new BrowserSim(server.issuer);
      const login = await (await browser.request('/account/login')).text();
      await browser.request('/account/login', {
        form: { csrf: BrowserSim.hidden(login, 'csrf'), username: 'alice', password: server.user.password },
      });
      const csrf = BrowserSim.hidden(await (await browser.request('/account')).text(), 'csrf');
      const verified = passwordStats().verified;
      const statuses = await Promise.all(
        Array.from(
          { length: 30 },
          async (_, i) =>
            (
              await browser.request('/account/password', {
                form: { csrf, current: `guess ${i}`, new: 'a brand new passphrase' },
              })
            ).status,
        ),
      );
      assert.deepEqual(tally(statuses), { 400: 5, 429: 25 });
      assert.equal(passwordStats().verified - verified, 5);
    });

    it('40 registrations at once against a limit of 20', { skip }, async () => {
      const statuses = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const response = await fetch(`${server.issuer}/oauth2/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.21' },
            body: JSON.stringify({ client_name: `agent ${i}`, redirect_uris: ['https://agent.example/cb'] }),
          });
          return response.status;
        }),
      );
      assert.deepEqual(tally(statuses), { 201: 20, 429: 20 });
    });

    it('an IPv6 /64 is one address however it rotates', { skip }, async () => {
      // Ten times an account's five free failures per address, each from a new address of the /64.
      const from = (i: number) => ({ 'x-forwarded-for': `2001:db8:77:1:${i.toString(16)}::${i + 1}` });
      const statuses: number[] = [];
      for (let i = 0; i < 51; i++) {
        const browser = new BrowserSim(server.issuer);
        const page = await (await browser.request('/account/login')).text();
        const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
        const body = new URLSearchParams({
          csrf: BrowserSim.hidden(page, 'csrf'),
          username: `nobody${i}`,
          password: 'x',
        });
        const headers = { cookie, 'content-type': 'application/x-www-form-urlencoded', ...from(i) };
        statuses.push(
          (await fetch(`${server.issuer}/account/login`, { method: 'POST', redirect: 'manual', headers, body })).status,
        );
      }
      assert.deepEqual(tally(statuses.slice(0, 50)), { 303: 50 });
      assert.equal(statuses[50], 429, 'the /64 has spent its allowance');
      const [throttled] = await server.store.listEvents({ type: 'user.sign_in_throttled', limit: 1 });
      assert.equal(throttled?.data?.by, 'address');
    });

    it("five failures with a client's id from one address leave it working from another", { skip }, async () => {
      const c = server.clients.confidential;
      const p = server.clients.public;
      const refresh = { grant_type: 'refresh_token', refresh_token: 'not-a-token' };
      const attacker = { 'x-forwarded-for': '203.0.113.66' };
      const request = (headers: Record<string, string>, authorization: string, form = refresh) =>
        fetch(`${server.issuer}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization, ...headers },
          body: new URLSearchParams(form),
        });
      for (let i = 0; i < 6; i++) {
        await request(attacker, basic(c.id, `wrong ${i}`));
        await request(attacker, basic(p.id, `wrong ${i}`));
      }
      assert.equal((await request(attacker, basic(c.id, c.secret!))).status, 429, 'the attacker is throttled');
      // The real app, elsewhere: authenticated (so the bogus refresh token is what fails), not 429.
      const app = { 'x-forwarded-for': '198.51.100.20' };
      const confidential = await request(app, basic(c.id, c.secret!));
      assert.equal(confidential.status, 400);
      assert.equal(((await confidential.json()) as { error: string }).error, 'invalid_grant');
      const browserApp = await fetch(`${server.issuer}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...app },
        body: new URLSearchParams({ ...refresh, client_id: p.id }),
      });
      assert.equal(browserApp.status, 400, 'the public client works from its own address');
      // A public client's id is not counted at all: only the attacker's address is.
      const keys = (await (await server.db()).selectFrom('throttles').select('key').execute()).map((r) => r.key);
      assert.ok(!keys.some((key) => key.includes(p.id)), keys.join(' '));
      assert.ok(keys.includes(`client:${c.id}@203.0.113.66`), keys.join(' '));
    });

    it('after a failure, a burst of wrong secrets gets no more than the allowance', { skip }, async () => {
      const c = server.clients.post;
      const form = (secret: string) => ({
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_id: c.id,
        client_secret: secret,
      });
      assert.equal((await tokenRequest(server, form('first wrong'))).status, 401);
      const statuses = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => (await tokenRequest(server, form(`wrong ${i}`))).status),
      );
      assert.deepEqual(tally(statuses), { 401: 4, 429: 26 });
    });
  });
}
