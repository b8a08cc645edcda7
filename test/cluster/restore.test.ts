// A restore never revives what was revoked, rotated away or retired after the backup, on SQLite and
// PostgreSQL: a real `tessera backup` of a running instance, then a refresh token revoked, another
// rotated and `tessera keys rotate --now`, then the backup restored with docs/backup.md's steps and
// the instances started again. Neither token works, the old key neither signs nor is published,
// users sign in again, and a later restart fences nothing more. Instances that start at the same
// moment on the restored database fence it once.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { run } from '../../src/cli/main.ts';
import { splitPassword } from '../../src/store/postgres/backup.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { type Balancer, type Instance, startBalancer, startCluster, startInstance } from '../helpers/instances.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { basic, exchange, getCode, tokenRequest } from '../helpers/tokens.ts';
import { ADMIN_URL, withPostgresDatabase, withSqliteDatabase } from '../store/databases.ts';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const kidOf = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

function cli(env: Record<string, string>, args: string[]) {
  const result = spawnSync(process.execPath, ['src/cli/main.ts', ...args], {
    env: { PATH: process.env.PATH, ...env, NODE_ENV: 'test' },
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `tessera ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** docs/backup.md's restore of SQLite: the old files moved aside, the copy installed owner-only. */
function restoreSqlite(file: string, backup: string) {
  for (const name of [file, `${file}-wal`, `${file}-shm`])
    if (existsSync(name)) renameSync(name, join(join(name, '..'), `before-restore-${name.split('/').at(-1)}`));
  const installed = spawnSync('install', ['-m', '600', backup, file], { encoding: 'utf8' });
  assert.equal(installed.status, 0, installed.stderr);
}

/** docs/backup.md's restore of PostgreSQL: a new, empty database, the dump loaded in one transaction. */
async function restorePostgres(url: string, backup: string) {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${name} RENAME TO ${name}_before_restore`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const loaded = spawnSync(
    'psql',
    ['--quiet', '--single-transaction', '-v', 'ON_ERROR_STOP=1', `--dbname=${url}`, `--file=${backup}`],
    { encoding: 'utf8' },
  );
  assert.equal(loaded.status, 0, loaded.stderr);
  return async () => {
    const cleanup = new pg.Client({ connectionString: ADMIN_URL });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS ${name}_before_restore`);
    await cleanup.end();
  };
}

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`a restore on ${name}`, async () => {
    const db = await database();
    const dir = await mkdtemp(join(tmpdir(), 'tessera-restore-'));
    let cleanup: (() => Promise<void>) | undefined;
    after(async () => {
      await cleanup?.();
      await db?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it('revives no token, session or key from after the backup', { skip: !db && `${name} unreachable` }, async () => {
      // An `&` in the address, which a shell would have cut: tessera backup hands it to pg_dump whole.
      const url = name === 'SQLite' ? db!.url : `${db!.url}?application_name=tessera-restore-test&connect_timeout=10`;
      const cluster = await startCluster(url, {
        count: 1,
        env: { TESSERA_KEY_RELOAD_INTERVAL: '1', TESSERA_DATA_DIR: dir },
      });
      const env = cluster.env;
      const confidential = cluster.clients.confidential;
      const auth = basic(confidential.id, confidential.secret!);
      const server = { issuer: cluster.issuer, user: cluster.user, clients: cluster.clients } as unknown as TestServer;
      const tokens = async (browser = new BrowserSim(cluster.issuer)) => {
        const response = await exchange(server, await getCode(server, confidential, { browser }));
        assert.equal(response.status, 200, await response.clone().text());
        return (await response.json()) as Tokens;
      };
      const refresh = (token: string) =>
        tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token }, auth);
      const userinfo = (token: string) =>
        fetch(`${cluster.issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      const jwks = async () =>
        ((await (await fetch(`${cluster.issuer}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map(
          (k) => k.kid,
        );

      let balancer: Balancer = cluster.balancer;
      let instances: Instance[] = cluster.instances;
      const ports = instances.map((i) => Number(new URL(i.url).port));
      const issuerPort = Number(new URL(cluster.issuer).port);
      try {
        const revoked = await tokens();
        const rotated = await tokens();
        const browser = new BrowserSim(cluster.issuer);
        await tokens(browser);
        const oldKid = kidOf(revoked.access_token);

        const backup = join(dir, name === 'SQLite' ? 'backup.db' : 'backup.sql');
        cli(env, ['backup', '--output', backup]);
        assert.equal(statSync(backup).mode & 0o777, 0o600, 'the backup is readable by its owner only');

        // After the backup: one refresh token revoked, another rotated away, the key rotated now.
        const revocation = await fetch(`${cluster.issuer}/oauth2/revoke`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: revoked.refresh_token }),
        });
        assert.equal(revocation.status, 200);
        assert.equal((await refresh(revoked.refresh_token)).status, 400);
        const next = await refresh(rotated.refresh_token);
        assert.equal(next.status, 200);
        const successor = (await next.json()) as Tokens;
        const rotation = cli(env, ['keys', 'rotate', '--now', '--alg', 'RS256']);
        const newKid = /signing key (\S+):/.exec(rotation)![1]!;
        const deadline = Date.now() + 5_000;
        while (kidOf((await tokens()).access_token) !== newKid) {
          assert.ok(Date.now() < deadline, 'the instance signs with the new key');
          await sleep(200);
        }

        // The guide's restore: every instance stopped, the backup put in place, the instances started.
        await balancer.close();
        for (const instance of instances) await instance.stop();
        const file = db!.url.slice('sqlite:'.length);
        if (name === 'SQLite') restoreSqlite(file, backup);
        else cleanup = await restorePostgres(url, backup);
        if (name === 'SQLite') {
          const restored = statSync(file);
          assert.equal(restored.mode & 0o777, 0o600);
          assert.equal(restored.uid, process.getuid!(), "owned by the service's user");
        }
        // Instances starting at the same moment: one fences, the others find nothing to do.
        const count = name === 'SQLite' ? 1 : 2;
        instances = await Promise.all(
          Array.from({ length: count }, (_, i) => startInstance({ ...env, LOG_LEVEL: 'warn' }, ports[i])),
        );
        balancer = await startBalancer(
          issuerPort,
          instances.map((i) => i.url),
        );
        // The log line reaches this process through a pipe, perhaps after /readyz's answer: wait for it.
        const said = () => instances.filter((i) => i.output().includes('restored database')).length;
        for (const until = Date.now() + 5_000; said() === 0 && Date.now() < until;) await sleep(50);
        assert.equal(said(), 1, 'one instance fenced the restored database, and said so');
        const restoredEvents = JSON.parse(cli(env, ['events', 'list', '--type', 'database.restored', '--json']));
        assert.equal((restoredEvents as unknown[]).length, 1);

        for (const [what, token] of [
          ['revoked after the backup', revoked.refresh_token],
          ['rotated away after the backup', rotated.refresh_token],
          ['issued after the backup', successor.refresh_token],
        ] as const) {
          const answer = await refresh(token);
          assert.equal(answer.status, 400, what);
          assert.equal(((await answer.json()) as { error: string }).error, 'invalid_grant', what);
        }
        assert.equal((await userinfo(revoked.access_token)).status, 401, 'an access token from before');
        const published = await jwks();
        assert.ok(!published.includes(oldKid), 'the key in the backup is no longer published');
        assert.ok(!published.includes(newKid), 'nor the one made after it');

        // Everyone signs in again (the session from before is gone), with a key made at the restore.
        const silent = await browser.request(
          `/oauth2/authorize?${new URLSearchParams({
            client_id: confidential.id,
            redirect_uri: confidential.redirectUri,
            response_type: 'code',
            scope: 'openid',
            prompt: 'none',
          })}`,
        );
        assert.equal(new URL(silent.headers.get('location')!).searchParams.get('error'), 'login_required');
        const fresh = await tokens();
        const freshKid = kidOf(fresh.access_token);
        assert.ok(![oldKid, newKid].includes(freshKid));
        assert.ok(published.includes(freshKid));
        assert.equal((await userinfo(fresh.access_token)).status, 200);

        // A later restart is an ordinary one: nothing more is fenced.
        await balancer.close();
        for (const instance of instances) await instance.stop();
        instances = [await startInstance(env, ports[0])];
        balancer = await startBalancer(issuerPort, [instances[0]!.url]);
        assert.ok(!instances[0]!.output().includes('restored database'));
        assert.equal((await refresh(fresh.refresh_token)).status, 200, 'tokens from after the restore stay good');
      } finally {
        await balancer.close();
        for (const instance of instances) await instance.stop();
      }
    });
  });
}

it("pg_dump is given PostgreSQL's address whole, but for its password", () => {
  assert.deepEqual(splitPassword('postgres://tessera:p%26ss%40w@db.example:5432/tessera?sslmode=require&a=b'), {
    url: 'postgres://tessera@db.example:5432/tessera?sslmode=require&a=b',
    password: 'p&ss@w',
  });
  assert.deepEqual(
    splitPassword('postgresql://tessera@/tessera?host=/run/postgresql&password=x%26y&options=-c%20a%3Db'),
    { url: 'postgresql://tessera@/tessera?host=/run/postgresql&options=-c%20a%3Db', password: 'x&y' },
  );
  assert.deepEqual(splitPassword('postgres://db.example/tessera'), {
    url: 'postgres://db.example/tessera',
    password: undefined,
  });
});

describe('tessera restore-finish, after a restore made by other means', () => {
  let server: TestServer;
  after(() => server?.close());

  it('ends every session and refresh token and replaces the keys', async () => {
    server = await startServer();
    const browser = new BrowserSim(server.issuer);
    const issued = await getCode(server, server.clients.confidential, { browser });
    const tokens = (await (await exchange(server, issued)).json()) as Tokens;
    const before = (await server.keys.store.listSigningKeys()).map((k) => k.kid);
    const lines: string[] = [];
    const io = {
      env: { DATABASE_URL: server.config.databaseUrl, TESSERA_SECRET: server.secret, NODE_ENV: 'test' },
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      stdin: async () => '',
    };
    assert.equal(await run(['restore-finish'], io), 0, lines.join('\n'));
    assert.match(lines.join('\n'), /every session and refresh token ended/);
    const refreshed = await tokenRequest(
      server,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(server.clients.confidential.id, server.clients.confidential.secret!),
    );
    assert.equal(refreshed.status, 400);
    const after = (await server.keys.store.listSigningKeys()).map((k) => k.kid);
    assert.equal(after.length, 2, 'a new key of each algorithm');
    assert.ok(
      after.every((kid) => !before.includes(kid)),
      'none of the keys from before',
    );
    const [event] = await server.store.listEvents({ type: 'database.restored' });
    assert.equal(event?.data?.finished_by, 'restore-finish');
    const session = await browser.request(
      `/oauth2/authorize?${new URLSearchParams({
        client_id: server.clients.confidential.id,
        redirect_uri: server.clients.confidential.redirectUri,
        response_type: 'code',
        scope: 'openid',
        prompt: 'none',
      })}`,
    );
    assert.equal(new URL(session.headers.get('location')!).searchParams.get('error'), 'login_required');
  });
});
