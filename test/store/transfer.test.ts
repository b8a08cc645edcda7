// `tessera export` and `tessera import`: SQLite → PostgreSQL → SQLite keeps every row (every `sub`
// and `client_id`, password and secret hashes, keys), and users sign in on the database at the end
// with the passwords and client secrets they had. A file cut short, altered, of another version or
// a newer Tessera, with an unknown table or field, encrypted under another secret, or meant for a
// database that is not empty is refused with its reason and changes nothing.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { createClient, rotateClientSecret } from '../../src/admin/clients.ts';
import { createUser } from '../../src/admin/new-user.ts';
import { loadConfig } from '../../src/config/index.ts';
import { securityEvent } from '../../src/events/index.ts';
import { openDatabase, openStore } from '../../src/store/index.ts';
import { EXPORTED_TABLES, NOT_EXPORTED } from '../../src/store/transfer/tables.ts';
import { KeyStore } from '../../src/tokens/keystore.ts';
import { decryptAtRest, encryptAtRest } from '../../src/tokens/at-rest.ts';
import { recoveryCodeHash } from '../../src/authn/recovery/codes.ts';
import { hashPassword } from '../../src/authn/password/hash.ts';
import { BrowserSim } from '../helpers/browser-sim.ts';
import { startInstance } from '../helpers/instances.ts';
import { freePort, PASSWORD } from '../helpers/server.ts';
import { basic } from '../helpers/tokens.ts';
import { withPostgresDatabase, type TestDatabase } from './databases.ts';

const SECRET = 'the-secret-of-the-export-and-import-test';
const APP_SECRET = 'JBSWY3DPEHPK3PXP';

interface Outcome {
  code: number;
  out: string[];
  err: string[];
}

type Line = Record<string, unknown>;

describe('export and import', async () => {
  const postgres: TestDatabase | undefined = await withPostgresDatabase();
  const skip = !postgres && 'PostgreSQL unreachable';
  let dir: string;
  let port: number;
  let issuer: string;
  let exported: string[];
  let alice: { id: string };
  let confidential: { id: string; secret: string };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-transfer-'));
    port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await postgres?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const env = (databaseUrl: string, secret = SECRET) => ({
    DATABASE_URL: databaseUrl,
    TESSERA_SECRET: secret,
    TESSERA_ISSUER: issuer,
    TESSERA_DATA_DIR: dir,
    TESSERA_OUTBOUND_ALLOW_PRIVATE: 'true',
    NODE_ENV: 'test',
  });
  const sqlite = (name: string) => `sqlite:${join(dir, `${name}.db`)}`;

  async function tessera(databaseUrl: string, args: string[], stdin = '', secret = SECRET): Promise<Outcome> {
    const out: string[] = [];
    const err: string[] = [];
    const io = { env: env(databaseUrl, secret), out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const code = await run(args, { ...io, stdin: async () => stdin });
    return { code, out, err };
  }

  async function exportOf(databaseUrl: string): Promise<string[]> {
    const result = await tessera(databaseUrl, ['export', '--include-keys', '--include-events']);
    assert.equal(result.code, 0, result.err.join('\n'));
    return result.out;
  }

  async function importInto(databaseUrl: string, lines: string[], secret = SECRET): Promise<Outcome> {
    return tessera(databaseUrl, ['import'], `${lines.join('\n')}\n`, secret);
  }

  /** The row lines, which an export of the same data repeats byte for byte. */
  const rowLines = (lines: string[]) => lines.slice(1, -1);

  async function usersIn(databaseUrl: string): Promise<number> {
    const db = openDatabase(databaseUrl);
    try {
      const { n } = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return Number(n);
    } finally {
      await db.destroy();
    }
  }

  it('SQLite → PostgreSQL → SQLite keeps every row, and users sign in at the end', { skip }, async () => {
    // The deployment: users (one disabled), clients (one mid-rotation), an API, a consent, a webhook,
    // keys, and the audit trail of it all.
    const source = sqlite('source');
    const config = loadConfig(env(source));
    const store = await openStore(source);
    try {
      await store.migrate();
      await KeyStore.open(store, SECRET);
      alice = await createUser(store, config, {
        username: 'alice',
        email: 'alice@example.com',
        name: 'Alice',
        passwordHash: await hashPassword(PASSWORD),
      });
      const bob = await createUser(store, config, { username: 'bob', email: 'bob@example.com' });
      await store.setUserDisabled(bob.id, true, 1_800_000_000);
      const made = await createClient(store, config, {
        name: 'Web app',
        redirectUris: [`${issuer}/cb`],
        scopes: ['openid', 'profile', 'email'],
        public: false,
      });
      confidential = { id: made.client.clientId, secret: made.clientSecret! };
      const rotated = await createClient(store, config, {
        name: 'Rotating',
        redirectUris: ['https://rotating.example/cb'],
        scopes: ['openid'],
        public: false,
      });
      await rotateClientSecret(store, rotated.client.clientId, undefined, undefined, 3600);
      await createClient(store, config, {
        name: 'SPA',
        redirectUris: ['https://spa.example/cb'],
        scopes: ['openid'],
        public: true,
      });
      await store.saveConsent(alice.id, confidential.id, ['openid', 'profile'], 1_800_000_000);
      const passkey = {
        id: 'pk_laptop',
        // Bob's: alice signs in below with her password alone.
        userId: bob.id,
        credentialId: 'Y3JlZGVudGlhbC1pZA',
        publicKey: new Uint8Array([165, 1, 2, 3, 38]),
        counter: 7,
        transports: ['internal', 'hybrid'],
        backupEligible: true,
        backedUp: true,
        name: 'Laptop',
        createdAt: 1_800_000_000,
        lastUsedAt: null,
        suspendedAt: null,
      };
      await store.addPasskey(passkey, securityEvent('passkey.added', 1_800_000_000, { userId: bob.id }));
      // Bob's authenticator app (its secret encrypted under TESSERA_SECRET) and recovery codes (hashed).
      const app = {
        userId: bob.id,
        secretEnc: encryptAtRest(SECRET, 'totpSecret', APP_SECRET),
        lastStep: 60_000_000,
        createdAt: 1_800_000_000,
        lastUsedAt: null,
      };
      const codes = ['abcd-efgh-ijkl-mnop', 'qrst-uvwx-yz23-4567'].map((code) => recoveryCodeHash(bob.id, code));
      await store.enrolTotp(app, codes, securityEvent('mfa.enrolled', 1_800_000_000, { userId: bob.id }));
      // Alice's GitHub account, linked (the provider itself is made below, by the CLI).
      const link = { providerId: 'github', subject: '583231', userId: alice.id, email: 'alice@example.com' };
      assert.equal(await store.createLink({ ...link, createdAt: 1_800_000_000, lastUsedAt: null }), true);
    } finally {
      await store.close();
    }
    const connection = ['--audience', 'https://mcp-as.example', '--remote-client-id', 'web', '--scope', 'tools'];
    for (const args of [
      ['resources', 'create', '--uri', 'https://api.example/', '--scope', 'apps', '--name', 'API'],
      ['webhooks', 'create', '--url', 'https://hooks.example/tessera', '--events', 'user.created'],
      ['connections', 'create', '--client', confidential.id, ...connection],
    ]) {
      const made = await tessera(source, args);
      assert.equal(made.code, 0, made.err.join('\n'));
    }
    const github = ['providers', 'create', '--type', 'github', '--client-id', 'Iv1.transfer', '--client-secret-stdin'];
    assert.equal((await tessera(source, github, 'the github secret')).code, 0);

    exported = await exportOf(source);
    const header = JSON.parse(exported[0]!) as { tables: Record<string, number> };
    for (const { table } of EXPORTED_TABLES) assert.ok(header.tables[table]! > 0, `rows of ${table} to carry`);

    const imported = await importInto(postgres!.url, exported);
    assert.equal(imported.code, 0, imported.err.join('\n'));
    const fromPostgres = await exportOf(postgres!.url);
    assert.deepEqual(rowLines(fromPostgres), rowLines(exported), 'PostgreSQL holds what SQLite held');

    const target = sqlite('target');
    assert.equal((await importInto(target, fromPostgres)).code, 0);
    assert.deepEqual(rowLines(await exportOf(target)), rowLines(exported), 'and back in SQLite');
    const carried = await openStore(target);
    try {
      const bob = (await carried.getUserByUsername('bob'))!;
      const app = (await carried.getTotp(bob.id))!;
      assert.equal(decryptAtRest(SECRET, 'totpSecret', app.secretEnc)?.plaintext, APP_SECRET);
      assert.equal(app.lastStep, 60_000_000, 'no code used before the move works after it');
      assert.equal((await carried.recoveryCodeSummary(bob.id)).unused, 2);
    } finally {
      await carried.close();
    }

    // On the database at the end of the round trip: alice signs in with her password, the web app
    // redeems the code with its secret, and the tokens are signed with a key from the start.
    const instance = await startInstance({ ...env(target), TESSERA_DEMO: 'false' }, port);
    try {
      const params = new URLSearchParams({
        client_id: confidential.id,
        redirect_uri: `${issuer}/cb`,
        response_type: 'code',
        scope: 'openid profile',
        state: 's',
      });
      const callback = await new BrowserSim(issuer).authorize(`${issuer}/oauth2/authorize?${params}`, {
        username: 'alice',
        password: PASSWORD,
      });
      assert.ok(callback.searchParams.get('code'), callback.href);
      const response = await fetch(`${issuer}/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: basic(confidential.id, confidential.secret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: `${issuer}/cb`,
        }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      const tokens = (await response.json()) as { id_token: string };
      const [head, payload] = tokens.id_token
        .split('.')
        .slice(0, 2)
        .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Line);
      assert.equal(payload!.sub, alice.id, 'the same sub');
      const kids = exported.map((l) => JSON.parse(l) as Line).filter((l) => l.table === 'signing_keys');
      assert.ok(
        kids.some((l) => (l.row as Line).kid === head!.kid),
        'signed with a key carried over',
      );
    } finally {
      await instance.stop();
    }
  });

  /** The lines with the header's counts and the trailer made to agree again, after a change. */
  function reseal(lines: string[]): string[] {
    const rows = lines.slice(1, -1);
    const header = JSON.parse(lines[0]!) as Line & { tables: Record<string, number> };
    const counts: Record<string, number> = Object.fromEntries(Object.keys(header.tables).map((t) => [t, 0]));
    for (const line of rows) counts[(JSON.parse(line) as { table: string }).table]!++;
    const first = JSON.stringify({ ...header, tables: counts });
    const hash = createHash('sha256');
    for (const line of [first, ...rows]) hash.update(`${line}\n`);
    return [first, ...rows, JSON.stringify({ end: 'tessera-export', tables: counts, sha256: hash.digest('hex') })];
  }

  const edit = (lines: string[], table: string, change: (row: Line) => Line) =>
    lines.map((line) => {
      const parsed = JSON.parse(line) as Line;
      return parsed.table === table ? JSON.stringify({ table, row: change(parsed.row as Line) }) : line;
    });

  it('refuses a partial, altered, mismatched or conflicting file, and changes nothing', { skip }, async () => {
    const header = JSON.parse(exported[0]!) as Line;
    const cases: Array<[string, string[], RegExp, string?]> = [
      ['no trailer', exported.slice(0, -1), /ends without its trailer line: it is incomplete/],
      ['cut inside a line', [...exported.slice(0, 3), exported[3]!.slice(0, 20)], /line 4 is not JSON/],
      ['a row altered', edit(exported, 'users', (r) => ({ ...r, email: 'mallory@example.com' })), /checksum/],
      ['a row removed', [exported[0]!, ...exported.slice(2)], /checksum|the header says/],
      [
        'another format version',
        reseal([JSON.stringify({ ...header, version: 2 }), ...exported.slice(1)]),
        /version 2/,
      ],
      [
        'a newer Tessera',
        reseal([
          JSON.stringify({ ...header, migrations: [...(header.migrations as string[]), '999_future'] }),
          ...exported.slice(1),
        ]),
        /newer Tessera \(migration 999_future/,
      ],
      [
        'an unknown table',
        reseal([...exported.slice(0, -1), JSON.stringify({ table: 'gadgets', row: {} }), exported.at(-1)!]),
        /unknown table "gadgets"/,
      ],
      [
        'an unknown field',
        reseal(edit(exported, 'users', (r) => ({ ...r, nickname: 'al' }))),
        /has no field "nickname"/,
      ],
      ['a missing field', reseal(edit(exported, 'clients', ({ name: _, ...r }) => r)), /lacks the field "name"/],
      [
        'a wrong type',
        reseal(edit(exported, 'users', (r) => ({ ...r, disabled: 'no' }))),
        /"disabled", which holds numbers/,
      ],
      [
        'a username twice',
        reseal([
          ...exported.slice(0, 2),
          exported[1]!.replace(/"id":"[^"]+"/, '"id":"another-id"'),
          ...exported.slice(2),
        ]),
        /users, rows up to line \d+: .*(UNIQUE|unique|duplicate)/,
      ],
      [
        'encrypted under another secret',
        exported,
        /opens under neither TESSERA_SECRET/,
        'another-secret-of-thirty-two-chars!',
      ],
    ];
    for (const [what, lines, message, secret] of cases) {
      const url = sqlite(`refused-${what.replace(/\W+/g, '-')}`);
      const result = await importInto(url, lines, secret);
      assert.equal(result.code, 1, `${what}: ${result.out.join('\n')}`);
      assert.match(result.err.join('\n'), message, what);
      assert.equal(await usersIn(url), 0, `${what}: nothing imported`);
    }
    const twice = await importInto(postgres!.url, exported);
    assert.equal(twice.code, 1);
    assert.match(twice.err.join('\n'), /the database is not empty \(users: 2, clients: 3/);
  });

  it('reads tables larger than a page, by a key of one column or two, each row once and in order', async () => {
    const url = sqlite('pages');
    const store = await openStore(url);
    await store.migrate();
    await store.close();
    const db = openDatabase(url);
    const ids = Array.from({ length: 1234 }, (_, i) => `u${String(i).padStart(5, '0')}`);
    try {
      const user = (id: string) => ({
        id,
        username: id,
        email: `${id}@example.com`,
        email_verified: 1,
        disabled: 0,
        created_at: 1,
        updated_at: 1,
        roles: '',
      });
      const consent = (id: string, client: string) => ({
        user_id: id,
        client_id: client,
        scope: 'openid',
        updated_at: 1,
      });
      for (let i = 0; i < ids.length; i += 200) {
        const slice = ids.slice(i, i + 200);
        await db.insertInto('users').values(slice.map(user)).execute();
        await db
          .insertInto('consents')
          .values(slice.flatMap((id) => [consent(id, 'b'), consent(id, 'a')]))
          .execute();
      }
    } finally {
      await db.destroy();
    }
    const rows = (await exportOf(url)).slice(1, -1).map((l) => JSON.parse(l) as { table: string; row: Line });
    const users = rows.filter((r) => r.table === 'users').map((r) => r.row.id);
    assert.deepEqual(users, ids);
    const consents = rows.filter((r) => r.table === 'consents').map((r) => `${r.row.user_id}/${r.row.client_id}`);
    assert.deepEqual(
      consents,
      ids.flatMap((id) => [`${id}/a`, `${id}/b`]),
    );
  });

  it('every table is exported or named with the reason it is not', async () => {
    const url = sqlite('tables');
    const store = await openStore(url);
    await store.migrate();
    await store.close();
    const db = openDatabase(url);
    try {
      const tables = (await db.introspection.getTables()).map((t) => t.name).sort();
      const decided = [...EXPORTED_TABLES.map((t) => t.table), ...Object.keys(NOT_EXPORTED)];
      assert.deepEqual(
        tables.filter((t) => !decided.includes(t)),
        [],
        'a new table goes into EXPORTED_TABLES or NOT_EXPORTED (src/store/transfer/tables.ts)',
      );
    } finally {
      await db.destroy();
    }
  });
});
