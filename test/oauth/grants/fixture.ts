// What the grant and token-endpoint unit tests call the domain code with, without HTTP: a real,
// migrated store (SQLite in memory, and PostgreSQL through onEachStore), its signing keys, the code
// sealer and refresh tokens under one secret, clients made as the CLI makes them, and a user. The
// clock is the context's `now`.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import { createClient } from '../../../src/admin/clients.ts';
import { createUser } from '../../../src/admin/new-user.ts';
import { loadConfig } from '../../../src/config/index.ts';
import type { OAuthError } from '../../../src/errors/index.ts';
import { CodeSealer, type AuthorizationCode } from '../../../src/oauth/codes.ts';
import type { GrantContext } from '../../../src/oauth/grants/types.ts';
import type { Params } from '../../../src/oauth/params.ts';
import type { Client } from '../../../src/store/clients.ts';
import { openStore } from '../../../src/store/index.ts';
import type { Store } from '../../../src/store/store.ts';
import type { User } from '../../../src/store/users.ts';
import { withPostgresDatabase, type TestDatabase } from '../../store/databases.ts';
import { KeyStore } from '../../../src/tokens/keystore.ts';
import { RefreshTokens } from '../../../src/tokens/refresh.ts';

export const NOW = 1_800_000_000;
export const ISSUER = 'https://as.example';
const SCOPES = ['openid', 'profile', 'email', 'apps', 'webhooks'];

export interface TestClient {
  client: Client;
  secret: string | null;
  redirectUri: string;
}

export interface Fixture {
  store: Store;
  ctx: GrantContext;
  user: User;
  confidential: TestClient;
  other: TestClient;
  public: TestClient;
  /** A confidential client registered for client_credentials only, with the API scope `apps`. */
  machine: TestClient;
  /** A sealed code for `client`, as the authorization endpoint issues it; `over` changes its fields. */
  code(client: TestClient, over?: Partial<Omit<AuthorizationCode, 'id' | 'iat' | 'exp'>>): string;
  close(): Promise<void>;
}

/** A request body as the token route hands it over (each parameter once). */
export function body(fields: Record<string, string>): Params {
  return new Map(Object.entries(fields).map(([name, value]) => [name, [value]]));
}

/** A PKCE pair (RFC 7636 §4.1, §4.2): a verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function fixture(databaseUrl = 'sqlite::memory:'): Promise<Fixture> {
  const secret = randomBytes(32).toString('base64url');
  const config = loadConfig({
    NODE_ENV: 'test',
    TESSERA_ISSUER: ISSUER,
    DATABASE_URL: databaseUrl,
    TESSERA_SECRET: secret,
    LOG_LEVEL: 'silent',
  });
  const store = await openStore(databaseUrl);
  await store.migrate();
  const keys = await KeyStore.open(store, secret, { now: () => NOW });
  const user = await createUser(store, config, { username: 'alice', email: 'alice@example.com', name: 'Alice' }, NOW);
  const make = async (
    name: string,
    options: { public?: boolean; grantTypes?: string[]; scopes?: string[] } = {},
  ): Promise<TestClient> => {
    const redirectUri = `https://${name}.example/cb`;
    const { client, clientSecret } = await createClient(
      store,
      config,
      {
        name,
        redirectUris: options.grantTypes?.includes('authorization_code') === false ? [] : [redirectUri],
        scopes: options.scopes ?? SCOPES,
        public: options.public ?? false,
        ...(options.grantTypes ? { grantTypes: options.grantTypes } : {}),
      },
      NOW,
    );
    return { client, secret: clientSecret, redirectUri };
  };
  const codes = new CodeSealer(secret);
  const ctx: GrantContext = { config, store, keys, codes, refreshTokens: new RefreshTokens(secret), now: NOW };
  return {
    store,
    ctx,
    user,
    confidential: await make('confidential'),
    other: await make('other'),
    public: await make('public', { public: true }),
    machine: await make('machine', { grantTypes: ['client_credentials'], scopes: ['apps'] }),
    code(client, over = {}) {
      const fields = {
        clientId: client.client.clientId,
        userId: user.id,
        redirectUri: client.redirectUri,
        scope: 'openid profile',
        codeChallenge: null,
        codeChallengeMethod: null,
        nonce: 'n-0S6_WzA2Mj',
        authTime: NOW - 10,
        amr: ['pwd'],
        acr: null,
        resource: null,
        claims: { name: 'Alice' },
        ...over,
      };
      return codes.issue(fields, ctx.now, 60);
    },
    close: () => store.close(),
  };
}

/** Asserts that `promise` rejects with the OAuthError subclass `type`, whose RFC error code is `error`. */
export async function rejectsWith(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => OAuthError,
  error: string,
  description?: RegExp,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    assert.equal(err.error, error);
    if (description) assert.match(err.message, description);
    return true;
  });
}

/**
 * Runs `tests` once on SQLite (in memory) and once on PostgreSQL (skipped when unreachable outside
 * CI): the single use of a code and the rotation of a family are each store's conditional writes.
 * `use` is handed each store's fixture before its tests run.
 */
export function onEachStore(use: (fixture: Fixture) => void, tests: () => void): void {
  const memory = async (): Promise<TestDatabase> => ({ url: 'sqlite::memory:', drop: async () => {} });
  for (const [name, database] of [
    ['SQLite', memory],
    ['PostgreSQL', withPostgresDatabase],
  ] as const) {
    describe(name, async () => {
      const db = await database();
      let current: Fixture | undefined;
      before(async () => {
        if (db) use((current = await fixture(db.url)));
      });
      after(async () => {
        await current?.close();
        await db?.drop();
      });
      if (db) tests();
    });
  }
}
