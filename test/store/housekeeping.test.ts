// Housekeeping keeps the tables bounded under steady traffic.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { purgeOnce, startHousekeeping } from '../../src/store/housekeeping.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';

const TABLES = ['sessions', 'grants', 'revoked_access_tokens'] as const;

describe('housekeeping', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      env: {
        TESSERA_ACCESS_TOKEN_TTL: '300',
        TESSERA_REFRESH_TOKEN_TTL: '600',
        TESSERA_SESSION_TTL: '600',
        TESSERA_HOUSEKEEPING_INTERVAL: '1',
      },
    });
  });
  after(() => server.close());

  async function counts(): Promise<Record<string, number>> {
    const db = await server.db();
    const result: Record<string, number> = {};
    for (const table of TABLES) {
      const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db);
      result[table] = Number(rows[0]!.n);
    }
    return result;
  }

  /** One user's traffic: sign in, exchange a code, refresh twice, revoke the access token. */
  async function traffic(): Promise<void> {
    const c = server.clients.confidential;
    const issued = await getCode(server, c, { browser: new BrowserSim(server.issuer) });
    let tokens = (await (await exchange(server, issued)).json()) as { access_token: string; refresh_token: string };
    for (let i = 0; i < 2; i++) {
      tokens = (await (
        await tokenRequest(
          server,
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
          basic(c.id, c.secret!),
        )
      ).json()) as typeof tokens;
    }
    await fetch(`${server.issuer}/oauth2/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.id, c.secret!) },
      body: new URLSearchParams({ token: tokens.access_token }),
    });
  }

  it('tables stay bounded under steady traffic', async () => {
    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    const perRound: Array<Record<string, number>> = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 5; i++) await traffic();
      server.clock.offset += 1200; // past every lifetime: code (+grace), session, refresh token, access token
      await purgeOnce(server.store, server.config, now());
      perRound.push(await counts());
    }
    for (const table of TABLES) {
      assert.deepEqual(
        perRound.map((c) => c[table]),
        [0, 0, 0, 0],
        `${table} is emptied of what expired`,
      );
    }
  });

  it('live rows are kept', async () => {
    await traffic();
    const before = await counts();
    await purgeOnce(server.store, server.config, Math.floor(Date.now() / 1000) + server.clock.offset);
    assert.deepEqual(await counts(), before);
    assert.ok(before.grants! > 0 && before.sessions! > 0 && before.revoked_access_tokens! > 0);
  });

  it('a grant stays while its refresh token lives, after its access tokens have expired', async () => {
    const now = () => Math.floor(Date.now() / 1000) + server.clock.offset;
    server.clock.offset += 1200;
    await purgeOnce(server.store, server.config, now());
    await traffic();
    server.clock.offset += 400; // past the access tokens' 300 s, within the refresh token's 600 s
    assert.equal((await purgeOnce(server.store, server.config, now())).grants, 0);
    assert.equal((await counts()).grants, 1);
    server.clock.offset += 300;
    assert.equal((await purgeOnce(server.store, server.config, now())).grants, 1);
  });

  it('runs in the background on its interval', async () => {
    server.clock.offset += 1200;
    const log = { info: () => {}, error: (obj: object) => assert.fail(JSON.stringify(obj)) };
    const housekeeping = startHousekeeping(
      server.store,
      server.config,
      log,
      () => Math.floor(Date.now() / 1000) + server.clock.offset,
    );
    try {
      const deadline = Date.now() + 5000;
      while (Object.values(await counts()).some((n) => n > 0)) {
        assert.ok(Date.now() < deadline, 'housekeeping did not run');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      housekeeping.stop();
    }
  });
});

describe('housekeeping and single-use codes', () => {
  let server: TestServer;
  // Access tokens that live less than a code: the grant must still outlive its code.
  before(async () => {
    server = await startServer({ env: { TESSERA_ACCESS_TOKEN_TTL: '10', TESSERA_CODE_TTL: '600' } });
  });
  after(() => server.close());

  it('a redeemed code stays refused after housekeeping, while it has not expired', async () => {
    const issued = await getCode(server, server.clients.confidential, { browser: new BrowserSim(server.issuer) });
    assert.equal((await exchange(server, issued)).status, 200);
    server.clock.offset += 30;
    // The replay revokes the grant; the grant's row is what refuses the code.
    assert.equal((await exchange(server, issued)).status, 400);
    server.clock.offset += 30; // the grant was revoked longer ago than an access token lives
    await purgeOnce(server.store, server.config, Math.floor(Date.now() / 1000) + server.clock.offset);
    const body = (await (await exchange(server, issued)).json()) as { error?: string; error_description?: string };
    assert.deepEqual(body, {
      error: 'invalid_grant',
      error_description: 'the authorization code has already been used',
    });
    // Once the code and its grace have passed, the grant goes.
    server.clock.offset += 600 + 600;
    const deleted = await purgeOnce(server.store, server.config, Math.floor(Date.now() / 1000) + server.clock.offset);
    assert.equal(deleted.grants, 1);
  });
});
