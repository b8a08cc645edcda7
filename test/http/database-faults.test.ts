// The database's faults never take the server down: PostgreSQL stopped under load (a cluster of the
// test's own), a SQLite file on a full disk (a small tmpfs, which needs root: CI runs as root) and a
// SQLite file the server may not write. Requests answer 503 with Retry-After meanwhile, nothing committed is lost,
// and requests succeed again once the database is back, without a restart.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { createPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from '../store/databases.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

async function tokens(server: TestServer): Promise<Tokens> {
  const response = await exchange(server, await getCode(server, server.clients.confidential));
  assert.equal(response.status, 200);
  return (await response.json()) as Tokens;
}

function refresh(server: TestServer, token: string): Promise<Response> {
  const c = server.clients.confidential;
  return tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, basic(c.id, c.secret!));
}

function userinfo(server: TestServer, accessToken: string): Promise<Response> {
  return fetch(`${server.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
}

async function assertUnavailable(response: Response): Promise<void> {
  assert.equal(response.status, 503, await response.clone().text());
  assert.equal(response.headers.get('retry-after'), '5');
  assert.deepEqual(await response.json(), {
    error: 'temporarily_unavailable',
    error_description: 'the service is temporarily unavailable; try again shortly',
  });
}

async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.issuer}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return Number(line?.split(' ').pop());
}

describe('PostgreSQL stopped and started again under load', async () => {
  const cluster: PgCluster | undefined = await createPgCluster();
  let database: TestDatabase | undefined;
  let server: TestServer;
  before(async () => {
    if (!cluster) return;
    database = await withPostgresDatabase(cluster.adminUrl);
    // A refresh whose commit reached the server but whose answer was lost is sent again: within the
    // reuse interval it gets the family's current token instead of revoking the family.
    server = await startServer({ databaseUrl: database!.url, env: { TESSERA_REFRESH_TOKEN_REUSE_INTERVAL: '30' } });
  });
  after(async () => {
    await server?.close();
    await database?.drop().catch(() => {});
    cluster?.destroy();
  });

  it('answers 503 while it is down, never 500, and serves again when it is back', { skip: !cluster }, async () => {
    // Four chains of refreshes run throughout; each keeps the token it holds until a refresh succeeds.
    const chains = await Promise.all([1, 2, 3, 4].map(() => tokens(server)));
    const held = await tokens(server);
    const statuses = new Map<number | string, number>();
    let running = true;
    const load = chains.map(async (chain) => {
      while (running) {
        const response = await refresh(server, chain.refresh_token).catch((err: Error) => err);
        const status = response instanceof Error ? response.message : response.status;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (response instanceof Error) continue;
        if (response.status === 200) Object.assign(chain, await response.json());
        else await response.body?.cancel();
        await sleep(5);
      }
    });
    await sleep(300);
    cluster!.stop();
    try {
      await assertUnavailable(await refresh(server, held.refresh_token));
      await assertUnavailable(await userinfo(server, held.access_token));
      const browser = new BrowserSim(server.issuer);
      // A client not in the cache: its lookup needs the database.
      const page = await browser.request(
        '/oauth2/authorize?response_type=code&client_id=not-cached&redirect_uri=https%3A%2F%2Fapp.example%2Fcb',
      );
      assert.equal(page.status, 503);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await page.text(), /temporarily_unavailable/);
      assert.equal((await fetch(`${server.issuer}/readyz`)).status, 503);
      assert.equal((await fetch(`${server.issuer}/healthz`)).status, 200);
      assert.ok((await metric(server, 'tessera_database_faults_total')) > 0);
      await sleep(1000);

      cluster!.start();
      const back = Date.now();
      while ((await fetch(`${server.issuer}/readyz`)).status !== 200) {
        assert.ok(Date.now() - back < 10_000, 'ready again within 10 s');
        await sleep(100);
      }
      await sleep(500);
    } finally {
      running = false;
      await Promise.all(load);
    }

    assert.deepEqual(
      [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
      [],
      `statuses: ${[...statuses]}`,
    );
    assert.ok(statuses.get(503)! > 0 && statuses.get(200)! > 0);
    // Every chain goes on from the token it holds: no refresh was half-written or lost.
    for (const chain of chains) {
      const response = await refresh(server, chain.refresh_token);
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal((await userinfo(server, ((await response.json()) as Tokens).access_token)).status, 200);
    }
    assert.equal((await refresh(server, held.refresh_token)).status, 200);
    const fresh = await tokens(server);
    assert.equal((await refresh(server, fresh.refresh_token)).status, 200);
  });
});

// A small tmpfs of the test's own: filled up to make the disk full, remounted read-only.
const root = userInfo().uid === 0;
if (!root && process.env.CI === 'true') throw new Error('CI runs as root: the SQLite fault tests must run');

describe('SQLite on a full disk and in a read-only file', { skip: !root && 'needs root (mount)' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-tmpfs-'));
  let server: TestServer;
  let mounted = false;
  const mount = (options: string) => execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  before(async () => {
    mount('size=4m');
    mounted = true;
    server = await startServer({ databaseUrl: `sqlite:${join(dir, 'tessera.db')}` });
  });
  after(async () => {
    await server?.close().catch(() => {});
    if (mounted) execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a full disk: writes answer 503, reads go on, and writes succeed once there is room', async () => {
    const before = await tokens(server);
    const filler = join(dir, 'filler');
    mkdirSync(filler);
    // Fill every block that is left, one file at a time.
    for (let i = 0; ; i++) {
      try {
        writeFileSync(join(filler, String(i)), Buffer.alloc(64 * 1024));
      } catch {
        break;
      }
    }
    let refused = 0;
    let token = before.refresh_token;
    for (let i = 0; i < 50 && refused === 0; i++) {
      const response = await refresh(server, token);
      if (response.status === 200) token = ((await response.json()) as Tokens).refresh_token;
      else {
        await assertUnavailable(response);
        refused++;
      }
    }
    assert.equal(refused, 1, 'a write on the full disk is refused with 503');
    assert.equal((await userinfo(server, before.access_token)).status, 200);
    assert.equal((await fetch(`${server.issuer}/readyz`)).status, 200);

    rmSync(filler, { recursive: true });
    const response = await refresh(server, token);
    assert.equal(response.status, 200, 'the token refused on the full disk was not consumed');
    assert.equal((await refresh(server, ((await response.json()) as Tokens).refresh_token)).status, 200);
  });

  // A file the server may not write. Root writes anything through its CAP_DAC_OVERRIDE, so the server
  // runs as root without it (as an unprivileged service would: the systemd unit bounds its capabilities),
  // keeping CAP_DAC_READ_SEARCH: another user's checkout in a 0700 folder stays readable to it, and the
  // database's folder, root's own, stays writable for SQLite's -wal and -shm files.
  it('a read-only file: writes answer 503, reads go on, and writes succeed once it is writable', async () => {
    const held = await tokens(server);
    const file = join(dir, 'tessera.db');
    const { issuer, secret } = server;
    await server.close();
    chmodSync(file, 0o444);
    const start = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start.split(' ').slice(1) as string[];
    const withoutOverride = ['--inh-caps=-dac_override', '--bounding-set=-dac_override', '--'];
    const child = spawn('setpriv', [...withoutOverride, process.execPath, ...start], {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        TESSERA_ISSUER: issuer,
        DATABASE_URL: `sqlite:${file}`,
        TESSERA_SECRET: secret,
        TESSERA_DATA_DIR: dir,
        TESSERA_DEMO: 'false',
        LOG_LEVEL: 'fatal',
      },
      stdio: 'ignore',
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    try {
      const deadline = Date.now() + 20_000;
      while ((await fetch(`${issuer}/readyz`).catch(() => undefined))?.status !== 200) {
        assert.ok(Date.now() < deadline && !exited, 'the server started on the read-only file');
        await sleep(100);
      }
      const fake = { issuer, clients: server.clients } as TestServer;
      await assertUnavailable(await refresh(fake, held.refresh_token));
      assert.equal((await userinfo(fake, held.access_token)).status, 200);
      // As an operator would: the file and the WAL that SQLite created with the file's permissions.
      for (const name of readdirSync(dir)) if (name.startsWith('tessera.db')) chmodSync(join(dir, name), 0o644);
      const response = await refresh(fake, held.refresh_token);
      assert.equal(response.status, 200, await response.clone().text());
      assert.ok(!exited);
    } finally {
      child.kill();
    }
  });
});
