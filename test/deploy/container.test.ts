// The container files and the production install, without a Docker engine (there is none where the
// tests run): what the Dockerfile, compose.yaml and the guide's `docker run` say is checked as written
// (exact images, every secret a file, read-only, no capability, limits, rotated logs), the guide's
// commands that make the secrets are run and what they make is read by Tessera's settings, the
// image's install and command are run on this machine as the Dockerfile writes them (production
// dependencies only, the machine's Node.js 24 standing in for the image's), and
// deploy/postgres-init.sh makes its role, its password from a file as compose gives it, on a
// PostgreSQL server of the test's own, where Tessera then migrates and serves as that role.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { parse } from 'yaml';
import { FILE_SETTINGS, loadConfig } from '../../src/config/index.ts';
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

interface ComposeService {
  image?: string;
  user?: string;
  restart?: string;
  stop_grace_period?: string;
  ports?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  tmpfs?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  mem_limit?: string;
  pids_limit?: number;
  logging?: { driver?: string; options?: Record<string, string> };
}

/** The guide's shell block whose first line is `# <title>`. */
function guideBlock(title: string): string {
  const guide = read('docs/deployment.md');
  for (const [, text] of guide.matchAll(/^```sh\n([\s\S]*?)^```/gm)) if (text!.startsWith(`# ${title}\n`)) return text!;
  assert.fail(`docs/deployment.md has no block "# ${title}"`);
}

/** Runs a block of the guide with sh in `cwd`, HOME there too. */
function runBlock(text: string, cwd: string): void {
  const result = spawnSync('sh', ['-eu', '-c', text], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd },
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
}

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<string, ComposeService>;
    secrets: Record<string, { file?: string; environment?: string }>;
  };
  const { tessera, postgres } = compose.services;
  const dir = mkdtempSync(join(tmpdir(), 'tessera-compose-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

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

  it('runs PostgreSQL at an exact release (a tag with its minor, or a digest), and Tessera from the Dockerfile', () => {
    assert.match(
      postgres!.image ?? '',
      /^postgres:\d+\.\d+(-[a-z]+)?(@sha256:[0-9a-f]{64})?$|^postgres@sha256:[0-9a-f]{64}$/,
    );
    assert.equal(tessera!.image, undefined);
  });

  it('passes every secret as a file, through top-level secrets, never in the environment', () => {
    const secretSettings = new Set([...FILE_SETTINGS, 'POSTGRES_PASSWORD', 'TESSERA_DB_PASSWORD']);
    const used = new Set<string>();
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        assert.ok(!secretSettings.has(key), `${name}: ${key} in the environment; ${key}_FILE instead`);
        if (!key.endsWith('_FILE')) continue;
        assert.ok(secretSettings.has(key.slice(0, -'_FILE'.length)), `${name}: ${key}`);
        const [, secret] = /^\/run\/secrets\/(\w+)$/.exec(value) ?? [];
        assert.ok(secret && service.secrets?.includes(secret), `${name}: ${key} names a secret the service has`);
        used.add(secret);
      }
    }
    assert.deepEqual(Object.keys(compose.secrets).sort(), [...used].sort(), 'every secret is used, by its setting');
    for (const [name, secret] of Object.entries(compose.secrets)) assert.equal(secret.file, `./secrets/${name}`);
    assert.ok(read('.gitignore').split('\n').includes('secrets/'), './secrets is kept out of the repository');
  });

  it("the guide's commands make exactly those files, private to the host's owner, which Tessera reads", () => {
    runBlock(guideBlock('the secrets of compose.yaml, made once'), dir);
    const secrets = join(dir, 'secrets');
    assert.equal(statSync(secrets).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(secrets).sort(), Object.keys(compose.secrets).sort());
    for (const file of readdirSync(secrets)) assert.equal(statSync(join(secrets, file)).mode & 0o777, 0o444, file);
    // Tessera's settings as the container has them (NODE_ENV from the image), the files where it finds them.
    const env = Object.fromEntries(
      Object.entries(tessera!.environment!).map(([key, value]) => [
        key,
        value.replace('/run/secrets/', `${secrets}/`).replace(/^\$\{TESSERA_ISSUER:\?.*\}$/, 'https://id.example'),
      ]),
    );
    const config = loadConfig({ ...env, TESSERA_TRUST_PROXY: 'loopback', NODE_ENV: 'production' });
    const password = readFileSync(join(secrets, 'tessera_db_password'), 'utf8').trim();
    const url = new URL(config.databaseUrl);
    assert.equal(url.username, 'tessera', "Tessera's own role, made by the init script, not the superuser");
    assert.equal(decodeURIComponent(url.password), password);
    assert.equal(`${url.host}${url.pathname}`, 'postgres:5432/tessera');
    assert.ok((config.secret ?? '').length >= 32);
    assert.equal(postgres!.environment?.POSTGRES_USER, undefined, 'the superuser stays postgres');
    assert.ok(postgres!.volumes!.includes('./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/tessera.sh:ro'));
  });

  it('confines both services: read-only, no capability, no new privileges, memory and process limits', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      assert.equal(service.read_only, true, name);
      assert.ok(service.tmpfs?.includes('/tmp'), `${name}: /tmp in memory`);
      assert.deepEqual(service.cap_drop, ['ALL'], name);
      assert.ok(service.security_opt?.includes('no-new-privileges:true'), name);
      assert.match(service.mem_limit ?? '', /^\d+[mg]$/, `${name}: mem_limit`);
      assert.ok(Number.isInteger(service.pids_limit) && service.pids_limit! > 0, `${name}: pids_limit`);
    }
    // Without capabilities the entrypoint cannot switch from root to postgres: it runs as postgres already.
    assert.equal(postgres!.user, 'postgres');
    assert.ok(postgres!.tmpfs?.includes('/var/run/postgresql'), "PostgreSQL's socket and lock file");
  });

  it("rotates both services' logs", () => {
    for (const [name, service] of Object.entries(compose.services)) {
      assert.equal(service.logging?.driver, 'json-file', name);
      assert.match(service.logging?.options?.['max-size'] ?? '', /^\d+[km]$/, `${name}: max-size`);
      assert.match(service.logging?.options?.['max-file'] ?? '', /^\d+$/, `${name}: max-file`);
    }
  });
});

describe("the guide's docker run", () => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-run-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const guide = read('docs/deployment.md');
  const command = /^docker run [\s\S]*?[^\\]$/m.exec(guide.replace(/\\\n\s*/g, '\\ '))?.[0] ?? '';

  it('keeps its secret in a file that outlives the container, and gives it as a file', () => {
    runBlock(guideBlock('the secret of docker run, made once'), dir);
    const file = join(dir, 'tessera', 'secret');
    assert.equal(statSync(join(dir, 'tessera')).mode & 0o777, 0o700);
    assert.equal(statSync(file).mode & 0o777, 0o444);
    assert.ok(readFileSync(file, 'utf8').trim().length >= 32);
    assert.match(command, /-v ~\/tessera\/secret:\/run\/secrets\/tessera_secret:ro /);
    assert.match(command, /-e TESSERA_SECRET_FILE=\/run\/secrets\/tessera_secret /);
    assert.doesNotMatch(command, /TESSERA_SECRET=/);
  });

  it('confines the container as compose.yaml does', () => {
    for (const option of [
      '--read-only',
      '--tmpfs /tmp',
      '--cap-drop ALL',
      '--security-opt no-new-privileges:true',
      '--memory ',
      '--pids-limit ',
      '--log-opt max-size=',
      '--log-opt max-file=',
    ])
      assert.ok(command.includes(option), option);
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
      // As compose.yaml gives it: a secret's file (with the newline the guide's command ends it with).
      const passwordFile = join(mkdtempSync(join(tmpdir(), 'tessera-init-')), 'tessera_db_password');
      writeFileSync(passwordFile, "a password with a quote: ' and spaces\n");
      const result = spawnSync('sh', [script], {
        env: {
          PATH: process.env.PATH,
          PGHOST: '127.0.0.1',
          PGPORT: String(cluster!.port),
          POSTGRES_USER: 'postgres',
          TESSERA_DB_PASSWORD_FILE: passwordFile,
        },
        encoding: 'utf8',
      });
      rmSync(dirname(passwordFile), { recursive: true, force: true });
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
