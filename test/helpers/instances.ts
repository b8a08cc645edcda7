// Several Tessera instances over one database, as production runs them: real processes started as
// `npm start` starts them (package.json's start script), one issuer, one TESSERA_SECRET, and a
// round-robin balancer in front, so that every step of a browser flow may land on another instance.
// An instance may run another release's code (test/helpers/previous-release.ts): its own folder.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '../../src/admin/clients.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { loadConfig } from '../../src/config/index.ts';
import { openStore } from '../../src/store/index.ts';
import { KeyStore } from '../../src/tokens/keystore.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { ALL_SCOPES, freePort, PASSWORD, type TestClient } from './server.ts';

/** The Node.js arguments of `npm start` in the release at `dir`, from its package.json. */
function startArgs(dir: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return scripts.start.split(' ').slice(1);
}

export interface Instance {
  /** Where this instance listens (the issuer is the balancer's address). */
  url: string;
  child: ChildProcess;
  /** What it printed. */
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts an instance on `port` (default: a free one), waiting until it is ready; `options.cwd` runs
 * the release in that folder (default: this one), on this Node.js.
 */
export async function startInstance(
  env: Record<string, string>,
  port?: number,
  options: { cwd?: string } = {},
): Promise<Instance> {
  port ??= await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, startArgs(options.cwd ?? '.'), {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      TESSERA_DEMO: 'false',
      LOG_LEVEL: 'warn',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exited = false;
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const instance: Instance = {
    url,
    child,
    output: () => output,
    exited: () => exited,
    async stop() {
      if (!exited) child.kill('SIGTERM');
      // Unreferenced: a stop that is over keeps nobody waiting for this timer.
      await Promise.race([exit, sleep(10_000, undefined, { ref: false }).then(() => child.kill('SIGKILL'))]);
    },
  };
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${url}/readyz`).catch(() => undefined))?.status !== 200) {
    if (exited || Date.now() > deadline) {
      await instance.stop();
      throw new Error(`the instance did not start: ${output}`);
    }
    await sleep(50);
  }
  return instance;
}

export interface Balancer {
  url: string;
  /** Requests sent to each backend. */
  served: number[];
  /**
   * Sends the requests to `backends` from now on: an instance restarted on a new port, so that no
   * port is given up for another test's process to take meanwhile.
   */
  replaceBackends(backends: string[]): void;
  /** Sends every request to one backend (by its index) until called again; undefined: round robin. */
  pin(index: number | undefined): void;
  close(): Promise<void>;
}

/** A round-robin HTTP balancer on 127.0.0.1: each request goes to the next backend. */
export async function startBalancer(port: number, backends: string[]): Promise<Balancer> {
  const served = backends.map(() => 0);
  let targets = [...backends];
  let next = 0;
  let pinned: number | undefined;
  const server: Server = createServer((req, res) => {
    const index = pinned ?? next++ % targets.length;
    served[index]!++;
    const target = new URL(req.url ?? '/', targets[index]);
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  // Idle connections are closed by the client only: a test that blocks its event loop (a child run
  // synchronously) would otherwise have the balancer's idle timeout fire just as the client reuses
  // the connection, which then fails with ECONNRESET.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    replaceBackends: (urls) => {
      targets = [...urls];
      served.length = 0;
      served.push(...urls.map(() => 0));
    },
    pin: (index) => (pinned = index),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Cluster {
  issuer: string;
  secret: string;
  env: Record<string, string>;
  user: { username: string; password: string };
  clients: { confidential: TestClient; public: TestClient };
  instances: Instance[];
  balancer: Balancer;
  stop(): Promise<void>;
}

/**
 * Seeds the database of `env` as this release makes it (every migration, signing keys, the user alice
 * and two clients whose redirect URIs are under the issuer).
 */
export async function seedDatabase(
  env: Record<string, string> & { TESSERA_ISSUER: string; DATABASE_URL: string; TESSERA_SECRET: string },
): Promise<{ confidential: TestClient; public: TestClient }> {
  const { TESSERA_ISSUER: issuer, DATABASE_URL: databaseUrl, TESSERA_SECRET: secret } = env;
  const config = loadConfig({ ...env, NODE_ENV: 'test' });
  const store = await openStore(databaseUrl);
  try {
    await store.migrate();
    await KeyStore.open(store, secret);
    await createUser(store, config, {
      username: 'alice',
      email: 'alice@example.com',
      passwordHash: await hashPassword(PASSWORD),
    });
    const make = async (name: string, isPublic: boolean): Promise<TestClient> => {
      const redirectUri = `${issuer}/cb/${name}`;
      const { client, clientSecret } = await createClient(store, config, {
        name: `Test ${name}`,
        redirectUris: [redirectUri],
        postLogoutRedirectUris: [`${redirectUri}/logged-out`],
        scopes: ALL_SCOPES,
        public: isPublic,
      });
      return {
        id: client.clientId,
        secret: clientSecret,
        redirectUri,
        postLogoutRedirectUri: `${redirectUri}/logged-out`,
      };
    };
    return { confidential: await make('confidential', false), public: await make('public', true) };
  } finally {
    await store.close();
  }
}

/** Seeds the database (seedDatabase), then starts `count` instances and the balancer. */
export async function startCluster(
  databaseUrl: string,
  options: { count?: number; env?: Record<string, string> } = {},
): Promise<Cluster> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const secret = randomBytes(32).toString('base64url');
  const env = { TESSERA_ISSUER: issuer, DATABASE_URL: databaseUrl, TESSERA_SECRET: secret, ...options.env };
  const clients = await seedDatabase(env);
  const instances: Instance[] = [];
  try {
    for (let i = 0; i < (options.count ?? 2); i++) instances.push(await startInstance(env));
  } catch (err) {
    await Promise.all(instances.map((instance) => instance.stop()));
    throw err;
  }
  const balancer = await startBalancer(
    port,
    instances.map((instance) => instance.url),
  );
  return {
    issuer,
    secret,
    env,
    user: { username: 'alice', password: PASSWORD },
    clients,
    instances,
    balancer,
    async stop() {
      await balancer.close();
      await Promise.all(instances.map((instance) => instance.stop()));
    },
  };
}
