// The schema is upgraded in place: a database made by 001_initial (the schema declared stable), with
// a row in every table, migrated to the latest schema (whatever migrations exist when this runs)
// keeps every row as it was, and the server works on it: a user signs in, a client redeems a code,
// a refresh token and a session from before the upgrade still work. On SQLite and PostgreSQL.
// The rows are written as 001_initial defines its columns, never through today's types.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { newWebhookSecret } from '../../src/webhooks/signature.ts';
import { sealWebhookSecret } from '../../src/webhooks/subscriptions.ts';
import { openDatabase, openStore } from '../../src/store/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { generateKey } from '../../src/tokens/keystore.ts';
import { hashToken } from '../../src/tokens/opaque.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { RefreshTokens } from '../../src/tokens/refresh.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startInstance } from '../helpers/instances.ts';
import { freePort } from '../helpers/server.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';

const SECRET = 'the-secret-of-the-upgrade-test-0123456789';
const PASSWORD = 'a password from before the upgrade';
const CLIENT_SECRET = 'client-secret-from-before-the-upgrade';
const SESSION_COOKIE = 'session-cookie-from-before-the-upgrade';

type Row = Record<string, unknown>;

/** Rows for every table of 001_initial, with its columns as 001_initial names them. */
async function rowsOf001(now: number, redirectUri: string): Promise<Record<string, Row[]>> {
  const keys = await Promise.all(
    (['RS256', 'ES256'] as const).map((alg) => generateKey(alg, SECRET, now - 100, now - 100, `initial:${alg}`)),
  );
  const [rs256, es256] = keys.map((k) => ({
    kid: k.kid,
    alg: k.alg,
    public_jwk: k.publicJwk,
    private_jwk_enc: k.privateJwkEnc,
    created_at: k.createdAt,
    activates_at: k.activatesAt,
    successor_of: k.successorOf,
  }));
  return {
    users: [
      {
        id: 'user-1',
        username: 'olduser',
        email: 'old@example.com',
        email_verified: 1,
        name: 'Old User',
        given_name: 'Old',
        family_name: 'User',
        password_hash: await hashPassword(PASSWORD),
        disabled: 0,
        created_at: now - 1000,
        updated_at: now - 1000,
      },
    ],
    clients: [
      {
        client_id: 'client-1',
        secret_hash: createHash('sha256').update(CLIENT_SECRET).digest('hex'),
        name: 'An app from before',
        redirect_uris: JSON.stringify([redirectUri]),
        post_logout_redirect_uris: '[]',
        scope: 'openid profile email',
        grant_types: JSON.stringify(['authorization_code', 'refresh_token']),
        token_endpoint_auth_method: 'client_secret_basic',
        first_party: 0,
        id_token_signed_response_alg: null,
        allowed_origins: '[]',
        created_at: now - 1000,
        registered_via: 'operator',
        owner_id: null,
        registration_token_hash: null,
        metadata: '{}',
        previous_secret_hash: null,
        previous_secret_expires_at: null,
      },
    ],
    sessions: [
      {
        id: hashToken(SESSION_COOKIE),
        user_id: 'user-1',
        auth_time: now - 500,
        created_at: now - 500,
        expires_at: now + 3600,
      },
    ],
    consents: [{ user_id: 'user-1', client_id: 'client-1', scope: 'openid profile email', updated_at: now - 500 }],
    grants: [
      {
        id: '0000000000000grant-1',
        user_id: 'user-1',
        client_id: 'client-1',
        scope: 'openid profile',
        auth_time: now - 500,
        created_at: now - 400,
        revoked_at: null,
        refresh_generation: 1,
        refresh_expires_at: now + 86_400,
        refresh_issued_at: now - 400,
        resource: null,
      },
    ],
    resources: [{ uri: 'https://api.example/', name: 'An API', scope: 'apps', created_at: now - 900 }],
    revoked_access_tokens: [{ jti: 'jti-revoked', expires_at: now + 3600 }],
    throttles: [{ key: 'account:olduser', subject: 'olduser', failures: 1, last_failure_at: now - 60 }],
    events: [
      {
        id: '0000000000000event-1',
        at: now - 1000,
        type: 'user.created',
        user_id: 'user-1',
        client_id: null,
        ip: null,
        user_agent: 'tessera CLI',
        data: null,
      },
    ],
    webhooks: [
      {
        id: 'wh_1',
        url: 'https://hooks.example/tessera',
        events: 'user.created',
        owner_id: null,
        secret_enc: sealWebhookSecret(newWebhookSecret(), SECRET),
        previous_secret_enc: null,
        previous_until: null,
        created_at: now - 1000,
      },
    ],
    webhook_deliveries: [
      {
        id: '0000000000000event-1.wh_1',
        webhook_id: 'wh_1',
        event_id: '0000000000000event-1',
        event_type: 'user.created',
        payload: '{"type":"user.created"}',
        status: 'delivered',
        attempts: 1,
        retry_base: 0,
        next_attempt_at: now - 1000,
        locked_until: null,
        created_at: now - 1000,
        last_status: 204,
        last_error: null,
        finished_at: now - 999,
      },
    ],
    webhook_attempts: [
      {
        delivery_id: '0000000000000event-1.wh_1',
        attempt: 1,
        at: now - 999,
        status: 204,
        duration_ms: 12,
        error: null,
      },
    ],
    signing_keys: [rs256!, es256!],
  };
}

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`an upgrade in place from 001_initial on ${name}`, async () => {
    const db = await database();
    const dir = await mkdtemp(join(tmpdir(), 'tessera-upgrade-'));
    after(async () => {
      await db?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it('keeps every row, and the server works on it', { skip: !db && `${name} unreachable` }, async () => {
      const port = await freePort();
      const issuer = `http://127.0.0.1:${port}`;
      const redirectUri = `${issuer}/cb/old`;
      const now = Math.floor(Date.now() / 1000);
      const rows = await rowsOf001(now, redirectUri);

      const store = await openStore(db!.url);
      assert.deepEqual(await store.migrate('001_initial'), ['001_initial']);
      const side = openDatabase(db!.url) as unknown as Kysely<Record<string, Record<string, unknown>>>;
      try {
        const { rows: tables } =
          name === 'SQLite'
            ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'
                and name not like 'tessera_migration%'`.execute(side)
            : await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public'
                and tablename not like 'tessera_migration%'`.execute(side);
        assert.deepEqual(
          tables.map((t) => t.name).sort(),
          Object.keys(rows).sort(),
          'rows in every table of 001_initial',
        );
        for (const [table, values] of Object.entries(rows)) await side.insertInto(table).values(values).execute();

        const applied = await store.migrate();
        assert.deepEqual(applied, Object.keys(migrations).slice(1), 'every later migration applied in place');
        await store.close();

        // Every row reads as it was written, column by column of 001_initial.
        for (const [table, values] of Object.entries(rows)) {
          for (const row of values) {
            const columns = Object.keys(row);
            const found = await side
              .selectFrom(table)
              .select(columns)
              .where(columns[0]!, '=', row[columns[0]!])
              .executeTakeFirst();
            assert.deepEqual({ ...found }, row, `${table} kept as it was`);
          }
        }
      } finally {
        await side.destroy();
      }

      const instance = await startInstance(
        { TESSERA_ISSUER: issuer, DATABASE_URL: db!.url, TESSERA_SECRET: SECRET, TESSERA_DATA_DIR: dir },
        port,
      );
      try {
        const basic = `Basic ${Buffer.from(`client-1:${CLIENT_SECRET}`).toString('base64')}`;
        const token = (form: Record<string, string>) =>
          fetch(`${issuer}/oauth2/token`, {
            method: 'POST',
            headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(form),
          });
        const authorization = (extra: Record<string, string> = {}) =>
          `${issuer}/oauth2/authorize?${new URLSearchParams({
            client_id: 'client-1',
            redirect_uri: redirectUri,
            response_type: 'code',
            scope: 'openid profile',
            state: 'st',
            ...extra,
          })}`;

        // The user signs in with the password from before, and the client redeems the code.
        const callback = await new BrowserSim(issuer).authorize(authorization(), {
          username: 'olduser',
          password: PASSWORD,
        });
        const code = callback.searchParams.get('code');
        assert.ok(code, callback.href);
        const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
        assert.equal(exchanged.status, 200, await exchanged.clone().text());
        const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
        const userinfo = await fetch(`${issuer}/oauth2/userinfo`, {
          headers: { authorization: `Bearer ${tokens.access_token}` },
        });
        assert.equal(((await userinfo.json()) as { sub: string }).sub, 'user-1');

        // The refresh token issued before the upgrade.
        const old = new RefreshTokens(SECRET).issue('0000000000000grant-1', 1);
        const refreshed = await token({ grant_type: 'refresh_token', refresh_token: old });
        assert.equal(refreshed.status, 200, await refreshed.clone().text());

        // The session from before: a silent authorization.
        const browser = new BrowserSim(issuer);
        browser.cookies.set('tessera_session', SESSION_COOKIE);
        const silent = await browser.request(authorization({ prompt: 'none' }));
        const location = new URL(silent.headers.get('location')!);
        assert.ok(location.searchParams.get('code'), location.href);

        // The keys from before are still published.
        const jwks = (await (await fetch(`${issuer}/oauth2/jwks`)).json()) as { keys: Array<{ kid: string }> };
        const kids = jwks.keys.map((k) => k.kid);
        for (const key of rows.signing_keys!)
          assert.ok(kids.includes(String(key.kid)), 'a key from before is published');
      } finally {
        await instance.stop();
      }
    });
  });
}
