// Rolling upgrades in both directions (docs/upgrades.md): the previous release's code (the commit
// release/previous.json names, checked out and installed beside this one) runs on a database this
// release migrated, on SQLite and PostgreSQL. Going back: this release signs a user in and issues
// tokens, stops, and the previous release starts alone and serves them. The mixed window: both run
// behind one balancer, and a code, a refresh token and a session issued by either are honoured by the
// other, in both directions; a rotated refresh token replayed at the other one ends the family.
// Whatever migrations this release has beyond the previous one, they are on the database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Balancer, type Instance, seedDatabase, startBalancer, startInstance } from '../helpers/instances.ts';
import { checkoutPreviousRelease, type PreviousRelease } from '../helpers/previous-release.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

const NEW = 0;
const OLD = 1;
const WHO = ['this release', 'the previous release'];

// The two databases run side by side, and the checkout (npm ci mostly) while this release issues its
// first tokens: each run waits for it only where the previous release starts.
describe('the previous release on a database this release migrated', { concurrency: true }, () => {
  let checkout: Promise<PreviousRelease | undefined>;
  before(() => {
    checkout = checkoutPreviousRelease();
    checkout.catch(() => undefined); // reported by the runs that wait for it
  });
  after(async () => {
    await (await checkout.catch(() => undefined))?.remove();
  });

  for (const [name, database] of [
    ['SQLite', withSqliteDatabase],
    ['PostgreSQL', withPostgresDatabase],
  ] as const) {
    it(`on ${name}: going back, and both releases side by side`, async (t) => {
      const db = await database();
      if (!db) return t.skip(`${name} unreachable`);
      const dir = await mkdtemp(join(tmpdir(), 'tessera-previous-data-'));
      const running = new Set<Instance>();
      let balancer: Balancer | undefined;
      try {
        const [port, newPort, oldPort] = [await freePort(), await freePort(), await freePort()];
        const issuer = `http://127.0.0.1:${port}`;
        const env = {
          TESSERA_ISSUER: issuer,
          DATABASE_URL: db.url,
          TESSERA_SECRET: randomBytes(32).toString('base64url'),
          TESSERA_DATA_DIR: dir,
          TESSERA_SHUTDOWN_DRAIN: '0',
        };
        // This release migrates the database and seeds it.
        const client = (await seedDatabase(env)).confidential;
        balancer = await startBalancer(port, [`http://127.0.0.1:${newPort}`, `http://127.0.0.1:${oldPort}`]);
        const start = async (which: number) => {
          const instance =
            which === NEW
              ? await startInstance(env, newPort)
              : await startInstance(env, oldPort, { cwd: (await checkout)!.dir });
          running.add(instance);
          return instance;
        };
        const stop = async (instance: Instance) => {
          await instance.stop();
          running.delete(instance);
        };
        const at = (which: number | undefined) => balancer!.pin(which);

        const authorization = (extra: Record<string, string> = {}) =>
          `${issuer}/oauth2/authorize?${new URLSearchParams({
            client_id: client.id,
            redirect_uri: client.redirectUri,
            response_type: 'code',
            scope: 'openid profile email',
            state: 'st',
            ...extra,
          })}`;
        const token = (form: Record<string, string>) =>
          fetch(`${issuer}/oauth2/token`, {
            method: 'POST',
            headers: {
              authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams(form),
          });
        /** A sign-in with the password, at `which`: the code, and the browser holding the session. */
        const signIn = async (which: number | undefined, browser = new BrowserSim(issuer)) => {
          at(which);
          const callback = await browser.authorize(authorization({ prompt: 'login' }), {
            username: 'alice',
            password: PASSWORD,
          });
          const code = callback.searchParams.get('code');
          assert.ok(code, `a code from ${WHO[which ?? 0]}: ${callback.href}`);
          return { code, browser };
        };
        /** A silent authorization with the browser's session, at `which`: its code. */
        const silent = async (which: number, browser: BrowserSim) => {
          at(which);
          const response = await browser.request(authorization({ prompt: 'none' }));
          const location = new URL(response.headers.get('location') ?? '', issuer);
          const code = location.searchParams.get('code');
          assert.ok(code, `the session is honoured by ${WHO[which]}: ${location.href}`);
          return code;
        };
        const redeem = async (which: number | undefined, code: string): Promise<Tokens> => {
          at(which);
          const response = await token({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri });
          assert.equal(response.status, 200, `a code redeemed by ${WHO[which ?? 0]}: ${await response.clone().text()}`);
          return (await response.json()) as Tokens;
        };
        const refresh = async (which: number | undefined, refreshToken: string): Promise<Tokens> => {
          at(which);
          const response = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
          assert.equal(response.status, 200, `refreshed by ${WHO[which ?? 0]}: ${await response.clone().text()}`);
          const tokens = (await response.json()) as Tokens;
          assert.notEqual(tokens.refresh_token, refreshToken, 'the refresh token rotates');
          return tokens;
        };
        const refused = async (which: number, refreshToken: string) => {
          at(which);
          const response = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
          assert.equal(response.status, 400);
          assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
        };
        const userinfo = async (which: number, accessToken: string) => {
          at(which);
          const response = await fetch(`${issuer}/oauth2/userinfo`, {
            headers: { authorization: `Bearer ${accessToken}` },
          });
          assert.equal(response.status, 200, `userinfo at ${WHO[which]}: ${await response.clone().text()}`);
          assert.equal(((await response.json()) as { email: string }).email, 'alice@example.com');
        };

        // This release signs alice in and issues her tokens, then stops.
        const newer = await start(NEW);
        const { code: newCode, browser: newSession } = await signIn(NEW);
        const fromNew = await redeem(NEW, newCode);
        await stop(newer);
        if (!(await checkout)) return t.skip('the previous release is not in this clone');

        // Going back: the previous release starts alone on the migrated database and serves what this
        // release issued: its refresh token, its access token, its session; and signs in anew.
        const older = await start(OLD);
        const refreshedByOld = await refresh(OLD, fromNew.refresh_token);
        await userinfo(OLD, fromNew.access_token);
        await redeem(OLD, await silent(OLD, newSession));
        const { code: oldCode, browser: oldSession } = await signIn(OLD);
        const fromOld = await redeem(OLD, oldCode);

        // Forward again, and both side by side (an old instance restarting mid-upgrade is this case).
        await start(NEW);
        await userinfo(NEW, fromOld.access_token);
        const first = await refresh(NEW, fromOld.refresh_token); // issued by the previous release
        const second = await refresh(OLD, first.refresh_token); // issued by this one
        const third = await refresh(NEW, second.refresh_token);
        await refresh(NEW, refreshedByOld.refresh_token);
        await redeem(NEW, (await signIn(OLD)).code);
        await redeem(OLD, (await signIn(NEW)).code);
        await redeem(NEW, await silent(NEW, oldSession));
        await redeem(OLD, await silent(OLD, newSession));

        // Every request of a flow to the other instance than the one before: sign-in pages, code, refreshes.
        const mixed = await redeem(undefined, (await signIn(undefined)).code);
        const again = await refresh(undefined, (await refresh(undefined, mixed.refresh_token)).refresh_token);
        assert.ok(balancer.served[NEW]! > 0 && balancer.served[OLD]! > 0);

        await refresh(OLD, again.refresh_token);

        // A refresh token the previous release rotated away, replayed at this one, is refused and ends
        // the family: its newest token, which this release issued, is refused by the previous release.
        await refused(NEW, first.refresh_token);
        await refused(OLD, third.refresh_token);
        assert.equal(older.exited(), false, 'the previous release kept running');
      } finally {
        await balancer?.close();
        await Promise.all([...running].map((instance) => instance.stop()));
        await db.drop();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
