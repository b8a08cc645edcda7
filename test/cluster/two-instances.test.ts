// Two instances over one PostgreSQL database, behind a round-robin balancer: a flow started on one
// completes on the other; what one instance changes (revocation, sign-out, consent withdrawn) the
// other sees at once, a client deleted through the CLI within the client cache's 5 s; concurrent
// code redemptions and refreshes spread over both are exactly-once.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startCluster, type Cluster } from '../helpers/instances.ts';
import type { TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

describe('two instances over one PostgreSQL database', async () => {
  const database: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !database && 'PostgreSQL unreachable';
  let cluster: Cluster;
  /** The balancer or one instance, in the shape the token helpers take. */
  let via: (url: string) => TestServer;
  let a: string;
  let b: string;
  before(async () => {
    if (!database) return;
    cluster = await startCluster(database.url, { env: { TESSERA_KEY_RELOAD_INTERVAL: '1' } });
    [a, b] = cluster.instances.map((instance) => instance.url) as [string, string];
    via = (url) => ({ issuer: url, user: cluster.user, clients: cluster.clients }) as unknown as TestServer;
  });
  after(async () => {
    await cluster?.stop();
    await database?.drop();
  });

  const confidential = () => cluster.clients.confidential;
  const auth = () => basic(confidential().id, confidential().secret!);
  const refresh = (url: string, token: string) =>
    tokenRequest(via(url), { grant_type: 'refresh_token', refresh_token: token }, auth());
  const userinfo = (url: string, token: string) =>
    fetch(`${url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
  const introspect = async (url: string, token: string) => {
    const response = await fetch(`${url}/oauth2/introspect`, {
      method: 'POST',
      headers: { authorization: auth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });
    return ((await response.json()) as { active: boolean }).active;
  };
  /** Signs in through the balancer (each step on the next instance) and exchanges the code at `url`. */
  const tokensAt = async (url: string, browser = new BrowserSim(cluster.issuer)): Promise<Tokens> => {
    const issued = await getCode(via(cluster.issuer), confidential(), { browser });
    const response = await exchange(via(url), issued);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Tokens;
  };

  it('a flow started on one instance completes on the other', { skip }, async () => {
    const before = [...cluster.balancer.served];
    const tokens = await tokensAt(b);
    assert.ok(
      cluster.balancer.served.every((n, i) => n > before[i]!),
      'the balancer sent steps of the sign-in to both instances',
    );
    assert.equal((await userinfo(a, tokens.access_token)).status, 200);
    const refreshed = await refresh(a, tokens.refresh_token);
    assert.equal(refreshed.status, 200);
    const next = (await refreshed.json()) as Tokens;
    assert.equal((await refresh(b, next.refresh_token)).status, 200);
    assert.equal((await userinfo(b, next.access_token)).status, 200);
    // The public client with PKCE: the code from one instance, redeemed at the other.
    const issued = await getCode(via(a), cluster.clients.public, { browser: new BrowserSim(a) });
    assert.equal((await exchange(via(b), issued)).status, 200);
  });

  it('a revocation at one instance holds at the other at once', { skip }, async () => {
    const tokens = await tokensAt(a);
    const revoke = (url: string, token: string) =>
      fetch(`${url}/oauth2/revoke`, {
        method: 'POST',
        headers: { authorization: auth(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      });
    assert.equal((await revoke(b, tokens.access_token)).status, 200);
    assert.equal((await userinfo(a, tokens.access_token)).status, 401);
    assert.equal((await revoke(a, tokens.refresh_token)).status, 200);
    assert.equal((await refresh(b, tokens.refresh_token)).status, 400);
  });

  it('signing out at one instance ends the session at the other', { skip }, async () => {
    const browser = new BrowserSim(a);
    const tokens = await tokensAt(b, browser);
    const c = confidential();
    const page = await browser.request(
      `/oauth2/logout?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: c.postLogoutRedirectUri })}`,
    );
    const html = await page.text();
    const done = await browser.request('/logout', {
      form: { logout: BrowserSim.hidden(html, 'logout'), csrf: BrowserSim.hidden(html, 'csrf') },
    });
    assert.equal(done.status, 303);
    // The cookie the browser still holds names a session that is gone, at the other instance too.
    const other = new BrowserSim(b);
    for (const [name, value] of browser.cookies) other.cookies.set(name, value);
    const params = new URLSearchParams({
      client_id: c.id,
      redirect_uri: c.redirectUri,
      response_type: 'code',
      scope: 'openid',
      prompt: 'none',
    });
    const answer = await other.request(`/oauth2/authorize?${params}`);
    assert.equal(new URL(answer.headers.get('location')!).searchParams.get('error'), 'login_required');
  });

  it('consent withdrawn at one instance is seen at the other', { skip }, async () => {
    const tokens = await tokensAt(a);
    const browser = new BrowserSim(a);
    const loginPage = await (await browser.request('/account/login')).text();
    await browser.request('/account/login', { form: { csrf: BrowserSim.hidden(loginPage, 'csrf'), ...cluster.user } });
    const page = await (await browser.request('/account')).text();
    const withdraw = await browser.request('/account/withdraw', {
      form: { csrf: BrowserSim.hidden(page, 'csrf'), client_id: confidential().id },
    });
    assert.equal(withdraw.status, 303);
    assert.equal(await introspect(b, tokens.access_token), false);
    assert.equal((await userinfo(b, tokens.access_token)).status, 401);
    assert.equal((await refresh(b, tokens.refresh_token)).status, 400);
  });

  it(
    'concurrent redemptions of one code and refreshes of one token, spread over both: exactly one wins',
    { skip },
    async () => {
      const browser = new BrowserSim(cluster.issuer);
      for (let i = 0; i < 5; i++) {
        const issued = await getCode(via(cluster.issuer), confidential(), { browser });
        const answers = await Promise.all([a, b, a, b].map((url) => exchange(via(url), issued)));
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400]);
      }
      for (let i = 0; i < 5; i++) {
        const tokens = await tokensAt(cluster.issuer, browser);
        const answers = await Promise.all([b, a, b, a].map((url) => refresh(url, tokens.refresh_token)));
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400]);
      }
    },
  );

  it('a key rotation through the CLI is seen by both instances within the reload interval', { skip }, async () => {
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['src/cli/main.ts', 'keys', ...args, '--alg', 'RS256'], {
        env: { PATH: process.env.PATH, ...cluster.env, NODE_ENV: 'test' },
        encoding: 'utf8',
      });
    const jwks = async (url: string) =>
      ((await (await fetch(`${url}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    const kidOf = (token: string) =>
      (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;
    const before = kidOf((await tokensAt(a)).access_token);
    const staged = cli('rotate');
    assert.equal(staged.status, 0, staged.stderr);
    const kid = /signing key (\S+):/.exec(staged.stdout)![1]!;
    const waitFor = async (check: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 3_000;
      while (!(await check())) {
        assert.ok(Date.now() < deadline, what);
        await sleep(100);
      }
    };
    // Published by both at once (1 s reload here), signing with it only after the stage.
    await waitFor(async () => (await jwks(a)).includes(kid) && (await jwks(b)).includes(kid), 'published by both');
    assert.equal(kidOf((await tokensAt(a)).access_token), before);
    assert.equal(kidOf((await tokensAt(b)).access_token), before);
    // The emergency path: both sign with it within the reload interval, and verify each other's tokens.
    assert.equal(cli('rotate', '--now').status, 0);
    await waitFor(
      async () => kidOf((await tokensAt(a)).access_token) === kid && kidOf((await tokensAt(b)).access_token) === kid,
      'both sign with the new key',
    );
    assert.equal((await userinfo(b, (await tokensAt(a)).access_token)).status, 200);
    assert.ok((await jwks(a)).includes(before) && (await jwks(b)).includes(before), 'the old key stays published');
  });

  // Last: it deletes the client the other tests use.
  it(
    'a client deleted through the CLI is refused by both instances within the client cache (5 s)',
    { skip },
    async () => {
      const c = confidential();
      const tokens = await tokensAt(a);
      // Both instances have the client cached now.
      assert.equal((await refresh(b, tokens.refresh_token)).status, 200);
      const cli = spawnSync(process.execPath, ['src/cli/main.ts', 'clients', 'delete', c.id], {
        env: { PATH: process.env.PATH, ...cluster.env, NODE_ENV: 'test' },
        encoding: 'utf8',
      });
      assert.equal(cli.status, 0, cli.stderr);
      const deleted = Date.now();
      for (const url of [a, b]) {
        while (true) {
          const response = await tokenRequest(via(url), { grant_type: 'refresh_token', refresh_token: 'x' }, auth());
          if (response.status === 401) break;
          assert.ok(Date.now() - deleted < 6_000, `${url} still knows the deleted client`);
          await sleep(200);
        }
      }
    },
  );
});
