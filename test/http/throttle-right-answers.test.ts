// Throttles that count failures, over HTTP on SQLite and PostgreSQL (issue 39): right answers sent at
// once are never refused because others were in flight, side by side with wrong ones sent at once,
// which still get no more than the allowance checked. Twenty right passwords of one account and sixty
// wrong ones of another (on one instance, and split over two on one database); eleven right codes
// after the password (recovery codes and the app's) and sixty wrong ones; twenty right client
// secrets from an address where the client had just failed, and sixty wrong ones of another client.
// Checks are counted (the hashing's own counter, failure events), never timed; the clock stands still.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { passwordStats } from '../../src/authn/password/hash.ts';
import { BrowserSim, unescapeHtml } from '../helpers/browser-sim.ts';
import { freshThrottles, preparedSignIn, secondInstance, tally } from '../helpers/bursts.ts';
import { newUser, passwordSignIn } from '../helpers/passkeys.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic } from '../helpers/tokens.ts';
import { type TestDatabase, withPostgresDatabase } from '../store/databases.ts';

/** A token request from `headers`' address: its status. */
async function tokenStatus(server: TestServer, form: Record<string, string>, headers: Record<string, string>) {
  const response = await fetch(`${server.issuer}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  await response.body?.cancel();
  return response.status;
}

for (const kind of ['SQLite', 'PostgreSQL'] as const) {
  describe(`right answers at once are never refused (${kind})`, async () => {
    const database: TestDatabase | undefined = kind === 'PostgreSQL' ? await withPostgresDatabase() : undefined;
    const skip = kind === 'PostgreSQL' && !database && 'PostgreSQL unreachable';
    let server: TestServer;
    before(async () => {
      if (skip) return;
      server = await startServer({
        ...(database ? { databaseUrl: database.url } : {}),
        env: { TESSERA_TRUST_PROXY: 'loopback' },
      });
    });
    after(async () => {
      if (server) delete server.clock.frozen;
      await server?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      if (!skip) await freshThrottles(server);
    });
    const free = () => server.config.throttle.freeFailures;
    const failures = async (userId: string) =>
      (await server.store.listEvents({ userId, type: 'user.sign_in_failed', limit: 1000 })).length;

    it('20 right passwords of one account at once all get in; 60 wrong ones get the allowance', { skip }, async () => {
      const bob = await newUser(server);
      const right = [];
      const wrong = [];
      for (let i = 0; i < 20; i++) right.push(await preparedSignIn(server.issuer, 'alice', server.user.password));
      for (let i = 0; i < 60; i++) wrong.push(await preparedSignIn(server.issuer, bob.username, `guess ${i}`));
      const hashed = passwordStats().verified;
      const [alice, mallory] = await Promise.all([
        Promise.all(right.map((attempt) => attempt())),
        Promise.all(wrong.map((attempt) => attempt())),
      ]);
      assert.deepEqual(tally(alice), { in: 20 }, 'no right password refused');
      assert.deepEqual(tally(mallory), { 303: free(), 429: 60 - free() });
      assert.equal(passwordStats().verified - hashed, 20 + free(), 'twenty right, and the allowance of wrong');
      assert.equal(await failures(bob.id), free());
    });

    it('the same, split over two instances of one database', { skip }, async () => {
      const other = await secondInstance(server);
      try {
        const origin = (i: number) => (i % 2 ? other.origin : server.issuer);
        const bob = await newUser(server);
        const right = [];
        const wrong = [];
        for (let i = 0; i < 20; i++)
          right.push(await preparedSignIn(server.issuer, 'alice', server.user.password, origin(i)));
        for (let i = 0; i < 60; i++)
          wrong.push(await preparedSignIn(server.issuer, bob.username, `guess ${i}`, origin(i)));
        const hashed = passwordStats().verified;
        const [alice, mallory] = await Promise.all([
          Promise.all(right.map((attempt) => attempt())),
          Promise.all(wrong.map((attempt) => attempt())),
        ]);
        assert.deepEqual(tally(alice), { in: 20 });
        assert.deepEqual(tally(mallory), { 303: free(), 429: 60 - free() });
        assert.equal(passwordStats().verified - hashed, 20 + free());
      } finally {
        await other.close();
      }
    });

    /** A new user with an authenticator app enrolled from the account page: the app and recovery codes. */
    async function enrolled() {
      const user = await newUser(server);
      const browser = new BrowserSim(server.issuer);
      await passwordSignIn(browser, user);
      const page = await (await browser.request('/account')).text();
      const totp = OTPAuth.URI.parse(
        unescapeHtml(/<a href="(otpauth:\/\/totp\/[^"]+)"/.exec(page)![1]!),
      ) as OTPAuth.TOTP;
      const form = { csrf: BrowserSim.hidden(page, 'csrf'), enrolment: BrowserSim.hidden(page, 'enrolment') };
      const timestamp = (server.clock.frozen! + server.clock.offset) * 1000;
      const done = await browser.request('/account/totp', { form: { ...form, code: totp.generate({ timestamp }) } });
      const codes = [...(await done.text()).matchAll(/<li><code>([a-z2-7-]+)<\/code><\/li>/g)].map((m) => m[1]!);
      assert.equal(codes.length, 10);
      return { user, totp, codes };
    }

    /** The password in a new browser, then the page of `method`'s code: posts of a code there, ready. */
    async function preparedCode(user: { username: string; password: string }, method: string) {
      const browser = new BrowserSim(server.issuer);
      const location = (await passwordSignIn(browser, user)).headers.get('location')!;
      const pending = /pending=([^&]+)/.exec(location)![1]!;
      const page = await (await browser.request(`/login/${method}?pending=${pending}`)).text();
      const form = { pending: BrowserSim.hidden(page, 'pending'), csrf: BrowserSim.hidden(page, 'csrf') };
      return async (code: string) => {
        const response = await browser.request(`/login/${method}`, { form: { ...form, code } });
        return response.status === 303 && response.headers.get('location') === '/account' ? 'in' : response.status;
      };
    }

    it('11 right codes of one account at once all get in; 60 wrong ones get the allowance', { skip }, async () => {
      const alice = await enrolled();
      const bob = await enrolled();
      // The enrolment spent its time step: the codes below are of the next.
      server.clock.offset += 30;
      const timestamp = (server.clock.frozen! + server.clock.offset) * 1000;
      const right = [(await preparedCode(alice.user, 'totp')).bind(null, alice.totp.generate({ timestamp }))];
      for (const code of alice.codes) right.push((await preparedCode(alice.user, 'recovery-code')).bind(null, code));
      const bobs = Number(bob.totp.generate({ timestamp }));
      const guess = await preparedCode(bob.user, 'totp');
      const failed = await failures(bob.user.id);
      const [answers, refused] = await Promise.all([
        Promise.all(right.map((attempt) => attempt())),
        Promise.all(Array.from({ length: 60 }, (_, i) => guess(String((bobs + 1 + i) % 1_000_000).padStart(6, '0')))),
      ]);
      assert.deepEqual(tally(answers), { in: 11 }, 'no right code refused');
      assert.deepEqual(tally(refused), { 400: free(), 429: 60 - free() });
      assert.equal((await failures(bob.user.id)) - failed, free(), 'only the allowance of wrong codes checked');
    });

    it('20 right client secrets at once all get through; 60 wrong ones get the allowance', { skip }, async () => {
      const c = server.clients.confidential;
      const d = server.clients.post;
      const refresh = { grant_type: 'refresh_token', refresh_token: 'not-a-token' };
      // The app mistyped its secret once from its address: its later attempts there are admitted first.
      const app = (secret: string) => ({ 'x-forwarded-for': '198.51.100.30', authorization: basic(c.id, secret) });
      assert.equal(await tokenStatus(server, refresh, app('typo')), 401);
      const attacker = { 'x-forwarded-for': '203.0.113.30' };
      const form = (secret: string) => ({ ...refresh, client_id: d.id, client_secret: secret });
      const [rights, wrongs] = await Promise.all([
        Promise.all(Array.from({ length: 20 }, () => tokenStatus(server, refresh, app(c.secret!)))),
        Promise.all(Array.from({ length: 60 }, (_, i) => tokenStatus(server, form(`wrong ${i}`), attacker))),
      ]);
      // Authenticated: the refresh token is what is wrong (400 invalid_grant), never 429.
      assert.deepEqual(tally(rights), { 400: 20 });
      assert.deepEqual(tally(wrongs), { 401: free(), 429: 60 - free() });
    });
  });
}
