// Starts Tessera on 127.0.0.1 and a free port, with a throwaway database, a user and test clients.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { createClient } from '../../src/admin/clients.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { openDatabase, openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';
import type { Database } from '../../src/store/tables.ts';
import { KeyStore } from '../../src/tokens/keystore.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';

export const PASSWORD = 'correct horse battery staple';
export const ALL_SCOPES = ['openid', 'profile', 'email', 'apps', 'webhooks'];

export interface TestClient {
  id: string;
  secret: string | null;
  redirectUri: string;
  postLogoutRedirectUri: string;
}

export interface TestServer {
  issuer: string;
  config: Config;
  store: Store;
  keys: KeyStore;
  app: FastifyInstance;
  /** The server's clock: real time plus `offset` seconds, or `frozen` plus `offset` when set. */
  clock: { offset: number; frozen?: number };
  /** The server's TESSERA_SECRET. */
  secret: string;
  /** A second connection to the server's database, for looking behind the Store (opened on first use). */
  db(): Promise<Kysely<Database>>;
  user: { id: string; username: string; password: string };
  clients: {
    confidential: TestClient;
    public: TestClient;
    firstParty: TestClient;
    es256: TestClient;
    post: TestClient;
    narrow: TestClient;
  };
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startServer(
  opts: {
    databaseUrl?: string;
    env?: Record<string, string>;
    logStream?: { write(line: string): void };
    /**
     * The issuer's host: 127.0.0.1 unless said otherwise; `localhost` where browsers must use passkeys
     * (a relying party's ID is a domain, never an IP address). The server listens on 127.0.0.1 either way.
     */
    host?: 'localhost';
  } = {},
): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-test-'));
  const port = await freePort();
  const issuer = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  const secret = randomBytes(32).toString('base64url');
  const config = loadConfig({
    NODE_ENV: 'test',
    TESSERA_ISSUER: issuer,
    DATABASE_URL: opts.databaseUrl ?? `sqlite:${join(dir, 'tessera.db')}`,
    TESSERA_DATA_DIR: dir,
    TESSERA_SECRET: secret,
    LOG_LEVEL: 'silent',
    ...opts.env,
  });
  const store = await openStore(config.databaseUrl, { thread: 'worker' });
  await store.migrate();
  const keys = await KeyStore.open(store, secret);
  const user = await createUser(store, config, {
    username: 'alice',
    email: 'alice@example.com',
    name: 'Alice Liddell',
    givenName: 'Alice',
    familyName: 'Liddell',
    passwordHash: await hashPassword(PASSWORD),
  });
  const make = async (
    name: string,
    options: {
      public?: boolean;
      firstParty?: boolean;
      alg?: 'ES256';
      authMethod?: 'client_secret_post';
      scopes?: string[];
    } = {},
  ) => {
    const redirectUri = `http://127.0.0.1:${port}/cb/${name}`;
    const { client, clientSecret } = await createClient(store, config, {
      name: `Test ${name}`,
      redirectUris: [redirectUri],
      postLogoutRedirectUris: [`${redirectUri}/logged-out`],
      scopes: options.scopes ?? ALL_SCOPES,
      public: options.public ?? false,
      ...(options.firstParty ? { firstParty: true } : {}),
      ...(options.alg ? { alg: options.alg } : {}),
      ...(options.authMethod ? { authMethod: options.authMethod } : {}),
    });
    return {
      id: client.clientId,
      secret: clientSecret,
      redirectUri,
      postLogoutRedirectUri: `${redirectUri}/logged-out`,
    };
  };
  const clients = {
    confidential: await make('confidential'),
    public: await make('public', { public: true }),
    firstParty: await make('first-party', { firstParty: true }),
    es256: await make('es256', { alg: 'ES256' }),
    post: await make('post', { authMethod: 'client_secret_post' }),
    narrow: await make('narrow', { scopes: ['openid', 'profile'] }),
  };
  const clock: TestServer['clock'] = { offset: 0 };
  const app = await buildApp({
    config,
    store,
    keys,
    secret,
    logger: opts.logStream !== undefined,
    ...(opts.logStream ? { logStream: opts.logStream } : {}),
    now: () => (clock.frozen ?? Math.floor(Date.now() / 1000)) + clock.offset,
  });
  await app.listen({ port, host: '127.0.0.1' });
  let direct: Kysely<Database> | undefined;
  return {
    issuer,
    config,
    store,
    keys,
    app,
    clock,
    secret,
    user: { id: user.id, username: 'alice', password: PASSWORD },
    clients,
    async db() {
      direct ??= openDatabase(config.databaseUrl);
      return direct;
    },
    async close() {
      await app.close();
      await store.close();
      await direct?.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The CLI's I/O against the server's database: what it printed, in `lines`, and `stdin` as given. */
export function cliIo(
  server: TestServer,
  stdin = '',
): { lines: string[]; io: import('../../src/cli/commands/common.ts').Io } {
  const lines: string[] = [];
  const io = {
    env: { DATABASE_URL: server.config.databaseUrl, TESSERA_SECRET: server.secret, NODE_ENV: 'test' },
    out: (line: string) => lines.push(line),
    err: (line: string) => lines.push(line),
    stdin: async () => stdin,
  };
  return { lines, io };
}
