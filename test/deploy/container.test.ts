// The container files and the production install, without a Docker engine (there is none where the
// tests run): what the Dockerfile and compose.yaml say is checked as written, the image's install and
// command are run on this machine as the Dockerfile writes them (production dependencies only, the
// machine's Node.js 24 standing in for the image's), and deploy/postgres-init.sh makes its role on a
// PostgreSQL server of the test's own, where Tessera then migrates and serves as that role.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { openStore } from '../../src/store/index.ts';
import { createPgCluster } from '../helpers/pg-cluster.ts';
import { freePort } from '../helpers/server.ts';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(): Array<{ op: string; args: string }> {
  return read('Dockerfile')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.trim().split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}
const all = (op: string) => instructions().filter((i) => i.op === op);
const startScript = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start.split(' ');

describe('the Dockerfile', () => {
  it('builds on the official Node.js image at an exact Node.js 24 version', () => {
    const from = all('FROM');
    assert.equal(from.length, 1);
    assert.match(from[0]!.args, /^node:24\.\d+\.\d+-[a-z]+(-slim)?(@sha256:[0-9a-f]{64})?$/);
  });

  it('installs the production dependencies only, from the lockfile: no devDependency, no second Node.js', () => {
    const installs = all('RUN').filter((r) => /\bnpm (ci|install|i)\b/.test(r.args));
    assert.equal(installs.length, 1);
    assert.match(installs[0]!.args, /^npm ci --omit=dev\b/);
    const [command, ...args] = JSON.parse(all('CMD').at(-1)!.args) as string[];
    assert.equal(command, 'node', "the image's Node.js, not node_modules/.bin/node");
    assert.deepEqual(args, startScript.slice(1), "the same Node.js flags and entry point as npm start's");
  });

  it('copies only what the server needs, and the build context holds nothing else', () => {
    const sources = all('COPY').flatMap((c) => c.args.split(' ').slice(0, -1));
    assert.deepEqual(sources.sort(), ['bin', 'package-lock.json', 'package.json', 'src']);
    const ignore = read('.dockerignore').split('\n');
    assert.ok(ignore.includes('*'), '.dockerignore starts from nothing');
    for (const source of sources)
      assert.ok(
        ignore.some((l) => l.replace(/^!|\/$/g, '') === source),
        source,
      );
  });

  it('runs unprivileged, with SQLite in a /data volume its user owns, and health on /healthz', () => {
    assert.equal(all('USER').at(-1)?.args, 'node');
    assert.ok(all('VOLUME').some((v) => v.args === '/data'));
    assert.ok(all('RUN').some((r) => /chown node:node \/data/.test(r.args)));
    const env = all('ENV')
      .map((e) => e.args)
      .join(' ');
    assert.match(env, /DATABASE_URL=sqlite:\/data\/tessera\.db/);
    assert.match(env, /TESSERA_DATA_DIR=\/data/);
    assert.doesNotMatch(env, /TESSERA_METRICS_HOST/, 'metrics stay on the container loopback');
    const health = all('HEALTHCHECK');
    assert.equal(health.length, 1);
    assert.match(health[0]!.args, /\/healthz/);
    assert.doesNotMatch(health[0]!.args, /\/readyz/);
  });
});

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<
      string,
      {
        restart?: string;
        stop_grace_period?: string;
        ports?: string[];
        environment?: Record<string, string>;
        volumes?: string[];
        depends_on?: Record<string, { condition: string }>;
      }
    >;
  };
  const { tessera, postgres } = compose.services;

  it('restarts both services, and waits for the drain and the shutdown before it kills', () => {
    for (const service of [tessera!, postgres!]) assert.match(service.restart ?? '', /^(always|unless-stopped)$/);
    const production = loadConfig({
      NODE_ENV: 'production',
      TESSERA_ISSUER: 'https://id.example',
      TESSERA_SECRET: 'x'.repeat(40),
    });
    const grace = /^(\d+)s$/.exec(tessera!.stop_grace_period ?? '');
    assert.ok(grace, 'stop_grace_period in seconds');
    assert.ok(Number(grace[1]) > production.shutdownDrain + production.shutdownTimeout);
    assert.equal(tessera!.depends_on?.postgres?.condition, 'service_healthy');
  });

  it('publishes Tessera on the loopback only, and not its metrics', () => {
    assert.ok(tessera!.ports!.length > 0);
    for (const port of tessera!.ports!) assert.match(port, /^127\.0\.0\.1:3000:3000$/);
    assert.equal(tessera!.environment!.TESSERA_METRICS_HOST, undefined, 'metrics stay on the container loopback');
  });

  it("connects as a role of Tessera's own, made by the init script, not as the superuser", () => {
    const url = tessera!.environment!.DATABASE_URL!.replace(/\$\{\w+\}/g, 'secret');
    assert.equal(new URL(url).username, 'tessera');
    assert.equal(postgres!.environment?.POSTGRES_USER, undefined, 'the superuser stays postgres');
    assert.ok(postgres!.volumes!.includes('./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/tessera.sh:ro'));
  });
});

describe('the production install, as the Dockerfile and the guide make it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-install-'));
  const app = join(dir, 'opt');
  let server: ChildProcess | undefined;
  let closed: Promise<unknown> | undefined;
  after(async () => {
    // npm and the server it started, a process group of their own (npm does not pass SIGTERM on
    // through its shell); done once the server's output closes.
    if (server?.pid) {
      try {
        process.kill(-server.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await closed;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  // The Node.js 24 the tests run on plays the image's (or the machine's, in the guide): first on the PATH.
  // npm's own settings (registry, certificates, cache) stay the machine's.
  const env = { ...process.env, PATH: [dirname(process.execPath), process.env.PATH].join(delimiter) };

  it('npm ci --omit=dev installs the dependencies and nothing of the development tools', () => {
    for (const copy of all('COPY')) {
      const parts = copy.args.split(' ');
      for (const source of parts.slice(0, -1)) cpSync(new URL(source, root), join(app, source), { recursive: true });
    }
    // The Dockerfile's install, without its `npm cache clean`, which would empty this machine's cache;
    // from that cache where it can (CI has just filled it).
    const install = all('RUN')
      .find((r) => r.args.startsWith('npm ci'))!
      .args.split('&&')[0]!
      .trim()
      .split(' ');
    const result = spawnSync('npm', [...install.slice(1), '--prefer-offline'], {
      cwd: app,
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
    assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
    assert.ok(existsSync(join(app, 'node_modules', 'fastify')));
    for (const dev of ['node', 'typescript', 'oidc-provider', 'playwright-core'])
      assert.equal(existsSync(join(app, 'node_modules', dev)), false, `${dev} is a devDependency`);
  });

  it("npm start serves there, the image's health check says healthy, and the CLI works", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const data = join(dir, 'data');
    const settings = {
      ...env,
      NODE_ENV: 'production',
      TESSERA_ISSUER: 'https://id.example.test',
      TESSERA_SECRET: 'a-secret-of-at-least-thirty-two-characters',
      HOST: '127.0.0.1',
      PORT: String(port),
      TESSERA_METRICS_PORT: String(metricsPort),
      // The image's /data, here.
      DATABASE_URL: `sqlite:${join(data, 'tessera.db')}`,
      TESSERA_DATA_DIR: data,
      TESSERA_SHUTDOWN_DRAIN: '0',
    };
    server = spawn('npm', ['start'], { cwd: app, env: settings, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    closed = new Promise((resolve) => server!.stdout!.once('close', resolve));
    let output = '';
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    const check = JSON.parse(all('HEALTHCHECK')[0]!.args.replace(/^.*?CMD\s+/, '')) as string[];
    assert.equal(check[0], 'node');
    const healthy = () => spawnSync(process.execPath, check.slice(1), { env: settings, timeout: 10_000 }).status === 0;
    const deadline = Date.now() + 30_000;
    while (!healthy()) {
      assert.ok(Date.now() < deadline && server.exitCode === null, `not healthy:\n${output}`);
      await sleep(200);
    }
    const discovery = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`);
    assert.equal(((await discovery.json()) as { issuer: string }).issuer, 'https://id.example.test');
    const cli = spawnSync(process.execPath, ['src/cli/main.ts', 'clients', 'list'], { cwd: app, env: settings });
    assert.equal(cli.status, 0, `${cli.stdout}${cli.stderr}`);
  });
});

describe('deploy/postgres-init.sh', async () => {
  const cluster = await createPgCluster();
  after(() => cluster?.destroy());

  it(
    'makes a role that is not a superuser and owns its database, where Tessera migrates',
    { skip: !cluster },
    async () => {
      const script = new URL('deploy/postgres-init.sh', root).pathname;
      const result = spawnSync('sh', [script], {
        env: {
          PATH: process.env.PATH,
          PGHOST: '127.0.0.1',
          PGPORT: String(cluster!.port),
          POSTGRES_USER: 'postgres',
          TESSERA_DB_PASSWORD: "a password with a quote: ' and spaces",
        },
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
      const admin = new pg.Client({ connectionString: cluster!.adminUrl });
      await admin.connect();
      try {
        const role = await admin.query(
          "SELECT rolsuper, rolcreatedb, rolcreaterole, rolpassword IS NOT NULL AS has_password FROM pg_authid WHERE rolname = 'tessera'",
        );
        assert.deepEqual(role.rows, [
          { rolsuper: false, rolcreatedb: false, rolcreaterole: false, has_password: true },
        ]);
        const owner = await admin.query(
          "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'tessera'",
        );
        assert.deepEqual(owner.rows, [{ owner: 'tessera' }]);
      } finally {
        await admin.end();
      }
      const store = await openStore(`postgres://tessera@127.0.0.1:${cluster!.port}/tessera`);
      try {
        assert.ok((await store.migrate()).length > 0, 'the migrations ran as tessera');
        assert.equal(await store.countUsers(), 0);
      } finally {
        await store.close();
      }
    },
  );
});
