// The tessera command, run as a child process the way an operator runs it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('tessera CLI', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-cli-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  function tessera(args: string[], stdin = ''): Promise<Result> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/tessera.js', ...args], {
        env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${join(dir, 't.db')}`, TESSERA_DATA_DIR: dir },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  it('clients: create (json), list, show, rotate-secret, delete', async () => {
    const created = await tessera([
      'clients',
      'create',
      '--name',
      'My app',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'https://app.example/cb2',
      '--scope',
      'openid profile apps',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const client = JSON.parse(created.stdout) as Record<string, unknown>;
    assert.equal(client.client_name, 'My app');
    assert.deepEqual(client.redirect_uris, ['https://app.example/cb', 'https://app.example/cb2']);
    assert.equal(client.token_endpoint_auth_method, 'client_secret_basic');
    assert.match(String(client.client_secret), /^[A-Za-z0-9_-]{43}$/);
    const id = String(client.client_id);

    const list = await tessera(['clients', 'list']);
    assert.match(list.stdout, new RegExp(id));
    const show = await tessera(['clients', 'show', id, '--json']);
    assert.equal(JSON.parse(show.stdout).client_secret, undefined, 'the secret is shown only once');
    const rotated = await tessera(['clients', 'rotate-secret', id, '--json']);
    assert.notEqual(JSON.parse(rotated.stdout).client_secret, client.client_secret);
    assert.equal((await tessera(['clients', 'delete', id])).code, 0);
    const gone = await tessera(['clients', 'show', id]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no client/);
  });

  it('clients create --public --first-party', async () => {
    const created = await tessera([
      'clients',
      'create',
      '--name',
      'SPA',
      '--redirect-uri',
      'http://localhost:5173/cb',
      '--scope',
      'openid',
      '--public',
      '--first-party',
      '--json',
    ]);
    const client = JSON.parse(created.stdout) as Record<string, unknown>;
    assert.equal(client.token_endpoint_auth_method, 'none');
    assert.equal(client.first_party, true);
    assert.equal(client.client_secret, undefined);
  });

  it('users: create with --password-stdin, list, set-password, disable', async () => {
    const created = await tessera(
      ['users', 'create', '--username', 'alice', '--email', 'alice@example.com', '--name', 'Alice', '--password-stdin'],
      'a good password\n',
    );
    assert.equal(created.code, 0, created.stderr);
    assert.match((await tessera(['users', 'list'])).stdout, /alice/);
    assert.equal((await tessera(['users', 'set-password', 'alice', '--password-stdin'], 'another password\n')).code, 0);
    assert.equal((await tessera(['users', 'disable', 'alice'])).code, 0);
    const users = JSON.parse((await tessera(['users', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    assert.equal(users.find((u) => u.username === 'alice')?.disabled, true);
    const duplicate = await tessera(['users', 'create', '--username', 'alice', '--email', 'a@example.com']);
    assert.equal(duplicate.code, 2);
  });

  it('grants: list for a user, revoke by user and client, revoke by id', async () => {
    const { openStore } = await import('../../src/store/index.ts');
    const created = JSON.parse(
      (
        await tessera([
          'clients',
          'create',
          '--name',
          'Granted app',
          '--redirect-uri',
          'https://g.example/cb',
          '--scope',
          'openid apps',
          '--json',
        ])
      ).stdout,
    );
    assert.equal((await tessera(['users', 'create', '--username', 'gina', '--email', 'gina@example.com'])).code, 0);
    const store = await openStore(`sqlite:${join(dir, 't.db')}`);
    const user = (await store.getUserByUsername('gina'))!;
    const now = Math.floor(Date.now() / 1000);
    for (const id of ['grant-1', 'grant-2']) {
      await store.redeemAuthorizationCode({
        grant: {
          id,
          userId: user.id,
          clientId: created.client_id,
          scope: 'openid apps',
          authTime: now,
          createdAt: now,
          revokedAt: null,
          refreshGeneration: 1,
          refreshExpiresAt: now + 3600,
          refreshIssuedAt: now,
          resource: null,
          amr: null,
          acr: null,
          sid: null,
        },
      });
    }
    // Only the CLI has the database open while it runs, as in production.
    await store.close();
    const revokedAt = async (id: string) => {
      const reader = await openStore(`sqlite:${join(dir, 't.db')}`);
      try {
        return (await reader.getGrant(id))!.revokedAt;
      } finally {
        await reader.close();
      }
    };
    const listed = JSON.parse((await tessera(['grants', 'list', '--user', 'gina', '--json'])).stdout) as Array<{
      grant_id: string;
      client_name: string;
    }>;
    assert.deepEqual(listed.map((g) => g.grant_id).sort(), ['grant-1', 'grant-2']);
    assert.equal(listed[0]!.client_name, 'Granted app');

    const byId = await tessera(['grants', 'revoke', 'grant-1']);
    assert.equal(byId.code, 0, byId.stderr);
    assert.notEqual(await revokedAt('grant-1'), null);
    const byClient = await tessera(['grants', 'revoke', '--user', 'gina', '--client', created.client_id]);
    assert.match(byClient.stdout, /revoked 1 grant/, byClient.stderr);
    assert.notEqual(await revokedAt('grant-2'), null);
    assert.match((await tessera(['grants', 'list', '--user', 'gina'])).stdout, /no application/);

    assert.equal((await tessera(['grants', 'revoke', 'no-such-grant'])).code, 1);
    assert.equal((await tessera(['grants', 'list'])).code, 2);
    assert.equal((await tessera(['grants', 'list', '--user', 'nobody'])).code, 1);
  });

  it('keys: a staged rotation, the emergency one, and the states listed', async () => {
    const rotated = await tessera(['keys', 'rotate', '--alg', 'ES256']);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(
      rotated.stdout,
      /new ES256 signing key \S+: published now, signs from \S+ \(in 420 s, once every cached JWKS/,
    );
    const again = await tessera(['keys', 'rotate', '--alg', 'ES256']);
    assert.match(again.stdout, /a rotation of ES256 is under way already: key \S+ signs from/);
    type Listed = { kid: string; alg: string; state: string; activates_at: string; retires_at: string | null };
    const list = async () => JSON.parse((await tessera(['keys', 'list', '--json'])).stdout) as Listed[];
    const staged = await list();
    const es256 = staged.filter((k) => k.alg === 'ES256').map((k) => k.state);
    assert.deepEqual(es256, ['active', 'next']);
    const now = await tessera(['keys', 'rotate', '--alg', 'ES256', '--now']);
    assert.equal(now.code, 0);
    assert.match(now.stderr, /^warning: ES256 key \S+ signs from now on\. Until every instance has reloaded its keys/);
    assert.match(now.stderr, /relying parties holding a cached JWKS \(up to 300 s\) refuse them/);
    const after = (await list()).filter((k) => k.alg === 'ES256');
    assert.deepEqual(
      after.map((k) => k.state),
      ['retired', 'active'],
    );
    assert.equal(after[0]!.retires_at, after[1]!.activates_at);
    assert.match(after[1]!.activates_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const table = (await tessera(['keys', 'list'])).stdout;
    assert.match(table, /^KID {2}ALG {2}STATE {2}CREATED {2}ACTIVATES {2}RETIRES {2}REMOVED$/m);
    assert.match(table, /ES256 {2}retired/);
  });

  it('migrate reports an up-to-date database', async () => {
    const result = await tessera(['migrate']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /up to date|applied/);
  });

  const wrong: Array<[string, string[], RegExp]> = [
    ['no command', [], /Usage/],
    ['unknown command', ['frobnicate'], /unknown command/],
    ['unknown option', ['clients', 'list', '--bogus'], /Unknown option/],
    [
      'missing --name',
      ['clients', 'create', '--redirect-uri', 'https://a.example/cb', '--scope', 'openid'],
      /--name is required/,
    ],
    [
      'unknown scope',
      ['clients', 'create', '--name', 'x', '--redirect-uri', 'https://a.example/cb', '--scope', 'openid superuser'],
      /unknown scope/,
    ],
    [
      'relative redirect URI',
      ['clients', 'create', '--name', 'x', '--redirect-uri', '/cb', '--scope', 'openid'],
      /not an absolute URI/,
    ],
    [
      'redirect URI with fragment',
      ['clients', 'create', '--name', 'x', '--redirect-uri', 'https://a.example/cb#x', '--scope', 'openid'],
      /fragment/,
    ],
    ['bad email', ['users', 'create', '--username', 'bob', '--email', 'nope'], /not an email/],
    [
      'short password',
      ['users', 'create', '--username', 'carol', '--email', 'c@example.com', '--password-stdin'],
      /at least 8/,
    ],
  ];
  for (const [name, args, message] of wrong) {
    it(`wrong arguments (${name}) → exit 2 with a clear message`, async () => {
      const result = await tessera(args, 'short\n');
      assert.equal(result.code, 2);
      assert.match(result.stderr + result.stdout, message);
    });
  }
});
