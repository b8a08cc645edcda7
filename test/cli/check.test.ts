// `tessera check`, run as an operator (or a script) would: one verdict line per part, exit 0 when
// none failed and 1 when one did: wrong settings, no database, migrations pending, an SMTP server
// that cannot be reached or refuses the password, signing keys the secret cannot open. It changes
// nothing: no database file made, no migration applied, no key generated.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { cliIo, freePort, startServer, type TestServer } from '../helpers/server.ts';

describe('tessera check', () => {
  let server: TestServer;
  let smtp: TestSmtp;
  let dir: string;
  before(async () => {
    server = await startServer();
    smtp = await startSmtp();
    dir = await mkdtemp(join(tmpdir(), 'tessera-check-'));
  });
  after(async () => {
    await server?.close();
    await smtp?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `tessera check` in this process, with the server's settings and `env` over them. */
  const check = async (env: Record<string, string> = {}, args: string[] = []) => {
    const { io, lines } = cliIo(server);
    const code = await run(['check', ...args], { ...io, env: { ...io.env, TESSERA_DATA_DIR: dir, ...env } });
    return { code, out: lines.join('\n') };
  };

  /** `tessera check` as its own process (bin/tessera.js), as a script runs it. */
  function spawned(env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/tessera.js', 'check'], {
        env: { PATH: process.env.PATH, NODE_ENV: 'test', TESSERA_DATA_DIR: dir, ...env },
      });
      let stdout = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout }));
    });
  }

  it('a deployment fit to serve: every part ok (mail skipped when none is configured), exit 0', async () => {
    const { code, out } = await check();
    assert.equal(code, 0, out);
    const lines = out.split('\n');
    assert.equal(lines.length, 5);
    assert.match(lines[0]!, /^ok {4}settings: NODE_ENV=test, issuer /);
    assert.match(lines[1]!, /^ok {4}database: .* answers$/);
    assert.match(lines[2]!, /^ok {4}migrations: every migration of this release applied$/);
    assert.match(lines[3]!, /^skip {2}mail: no SMTP server/);
    assert.match(lines[4]!, /^ok {4}signing keys: \d+ open under the secret; signing: RS256 \S+, ES256 \S+$/);
    const json = await check({}, ['--json']);
    assert.deepEqual(
      JSON.parse(json.out).map((v: { check: string; status: string }) => [v.check, v.status]),
      [
        ['settings', 'ok'],
        ['database', 'ok'],
        ['migrations', 'ok'],
        ['mail', 'skip'],
        ['signing keys', 'ok'],
      ],
    );
  });

  it('signing keys another secret made: FAIL, exit 1', async () => {
    const { code, out } = await check({ TESSERA_SECRET: 'another-secret-of-at-least-32-characters!!' });
    assert.equal(code, 1);
    assert.match(out, /^FAIL {2}signing keys: \d+ of \d+ cannot be opened \(.*\): is TESSERA_SECRET/m);
    assert.match(out, /^ok {4}database:/m);
  });

  it('the settings wrong: FAIL, and nothing else checked', async () => {
    const { code, out } = await check({ TESSERA_ISSUER: 'not a url', PORT: 'abc' });
    assert.equal(code, 1);
    assert.match(out, /^FAIL {2}settings: invalid configuration: TESSERA_ISSUER: Invalid URL.*; PORT: /m);
    assert.match(out, /^FAIL {2}database: not checked: the settings are wrong$/m);
  });

  it('no database: FAIL, and none is made; an empty one: migrations pending, none applied', async () => {
    const missing = join(dir, 'nowhere', 'tessera.db');
    const absent = await check({ DATABASE_URL: `sqlite:${missing}` });
    assert.equal(absent.code, 1);
    assert.match(absent.out, /^FAIL {2}database: no database at .*nowhere\/tessera\.db \(the first start/m);
    assert.equal(existsSync(join(dir, 'nowhere')), false, 'no folder, no file made');

    const empty = join(dir, 'empty.db');
    await writeFile(empty, '');
    const pending = await check({ DATABASE_URL: `sqlite:${empty}` });
    assert.equal(pending.code, 1);
    const last = Object.keys(migrations).at(-1)!;
    assert.match(
      pending.out,
      new RegExp(`^FAIL {2}migrations: pending: 001_initial, .*${last} \\(tessera migrate`, 'm'),
    );
    assert.match(pending.out, /^skip {2}signing keys: not checked: the database has no tables yet$/m);
    const db = new DatabaseSync(empty);
    const tables = db.prepare("select count(*) as n from sqlite_master where type = 'table'").get() as { n: number };
    db.close();
    assert.equal(tables.n, 0, 'nothing migrated');

    const pg = await check({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/tessera` });
    assert.equal(pg.code, 1);
    assert.match(pg.out, /^FAIL {2}database: postgres:\/\/.*127\.0\.0\.1:\d+\/tessera: /m);
  });

  it('an SMTP server that answers, refuses the password, or is not there: ok, FAIL, FAIL', async () => {
    const base = {
      DATABASE_URL: server.config.databaseUrl,
      TESSERA_SECRET: server.secret,
      TESSERA_SMTP_URL: smtp.url,
      NODE_EXTRA_CA_CERTS: smtp.caFile,
    };
    const fine = await spawned({ ...base, TESSERA_SMTP_PASSWORD: smtp.password });
    assert.equal(fine.code, 0, fine.stdout);
    assert.match(fine.stdout, /^ok {4}mail: 127\.0\.0\.1:\d+ accepts a connection, TLS and the credentials$/m);
    assert.equal(smtp.received.length, 0, 'no mail sent');

    const refused = await spawned({ ...base, TESSERA_SMTP_PASSWORD: 'not the password' });
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stdout, /^FAIL {2}mail: 127\.0\.0\.1:\d+: .*/m);

    const port = await freePort();
    const { code, out } = await check({ TESSERA_SMTP_URL: `smtp://127.0.0.1:${port}`, TESSERA_SMTP_PASSWORD: 'x' });
    assert.equal(code, 1);
    assert.match(out, new RegExp(`^FAIL {2}mail: 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`, 'm'));
  });
});
