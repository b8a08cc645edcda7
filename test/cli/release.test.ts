// The release's identity, as an operator meets it: `tessera --version`, the start's log line, one
// JSON log line per migration applied (by a start, by `tessera migrate`, by any command that finds the
// database behind), and `tessera migrate --status` (applied, pending, and those of a newer release).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { run } from '../../src/cli/main.ts';
import { openDatabase } from '../../src/store/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { startInstance } from '../helpers/instances.ts';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const ALL = Object.keys(migrations);

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command as an operator runs it: a process of its own. */
function spawned(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/tessera.js', ...args], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The command in this process (quicker, the same code past the process's start). */
async function tessera(args: string[], env: Record<string, string>): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    env,
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    stdin: async () => '',
  });
  return { code, stdout, stderr };
}

/** The JSON log lines of an output; any other line fails the test. */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the release, named', () => {
  let dir: string;
  let env: Record<string, string>;
  let n = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-release-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const fresh = () => {
    const url = `sqlite:${join(dir, `db-${++n}.db`)}`;
    env = { DATABASE_URL: url, TESSERA_DATA_DIR: dir };
    return url;
  };

  it('tessera --version and -v print the version of package.json, with no settings at all', async () => {
    assert.match(VERSION, /^\d+\.\d+\.\d+$/);
    for (const flag of ['--version', '-v']) {
      const result = await spawned([flag], { DATABASE_URL: 'postgres://nowhere.invalid/x' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `tessera ${VERSION}\n`);
    }
  });

  it('tessera migrate logs each migration it applies as a JSON line naming the release', async () => {
    fresh();
    const first = await spawned(['migrate'], env);
    assert.equal(first.code, 0, first.stderr);
    const lines = jsonLines(first.stdout);
    assert.deepEqual(
      lines.map((l) => [l.migration, l.version, l.msg]),
      ALL.map((name) => [name, VERSION, `applied migration ${name} (Tessera ${VERSION})`]),
    );
    assert.ok(lines.every((l) => l.level === 30 && typeof l.time === 'number'));
    const again = await tessera(['migrate'], env);
    assert.deepEqual(
      jsonLines(again.stdout).map((l) => [l.msg, l.version]),
      [['the database is up to date', VERSION]],
    );
  });

  it('another command on a database behind logs the migrations on standard error, its output unchanged', async () => {
    fresh();
    const listed = await tessera(['clients', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), []);
    assert.deepEqual(
      jsonLines(listed.stderr).map((l) => l.migration),
      ALL,
    );
  });

  it('tessera migrate --status: pending, applied, and those of a newer release, changing nothing', async () => {
    const url = fresh();
    const before = await tessera(['migrate', '--status'], env);
    assert.equal(before.code, 0, before.stderr);
    for (const name of ALL) assert.match(before.stdout, new RegExp(`^${name} +pending +-$`, 'm'));
    assert.match(before.stdout, new RegExp(`Tessera ${VERSION}: 0 applied, ${ALL.length} pending, 0 of a newer`));
    assert.match(before.stdout, /The next start, or tessera migrate, applies the pending migrations/);
    const still = JSON.parse((await tessera(['migrate', '--status', '--json'], env)).stdout);
    assert.deepEqual(still, { version: VERSION, applied: [], pending: ALL, newer: [] }, 'the status applied nothing');

    assert.equal((await tessera(['migrate'], env)).code, 0);
    const db = openDatabase(url);
    try {
      // As a newer release leaves the database: a migration this release does not know.
      await sql`insert into tessera_migrations (name, timestamp) values ('999_later', '2099-01-01T00:00:00.000Z')`.execute(
        db,
      );
      const status = await tessera(['migrate', '--status'], env);
      assert.match(status.stdout, /^MIGRATION +STATE +APPLIED$/m);
      for (const name of ALL) assert.match(status.stdout, new RegExp(`^${name} +applied +\\d{4}-\\d\\d-\\d\\dT`, 'm'));
      assert.match(status.stdout, /^999_later +newer +2099-01-01T00:00:00.000Z$/m);
      assert.match(status.stdout, new RegExp(`${ALL.length} applied, 0 pending, 1 of a newer release`));
      assert.match(status.stdout, /A newer release migrated this database; this release runs on it/);
      const json = JSON.parse((await tessera(['migrate', '--status', '--json'], env)).stdout) as {
        applied: Array<{ name: string; applied_at: string }>;
        newer: unknown;
      };
      assert.deepEqual(
        json.applied.map((m) => m.name),
        ALL,
      );
      assert.deepEqual(json.newer, [{ name: '999_later', applied_at: '2099-01-01T00:00:00.000Z' }]);

      // A database that lacks one of this release's migrations and has a newer one: this release stops.
      await sql`delete from tessera_migrations where name = ${ALL.at(-1)!}`.execute(db);
      const stuck = await tessera(['migrate', '--status'], env);
      assert.match(stuck.stdout, new RegExp(`^${ALL.at(-1)!} +pending +-$`, 'm'));
      assert.match(stuck.stdout, /This release cannot start on this database .*: run the newer release/);
      const refused = await tessera(['migrate'], env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /migrations of a newer release \(999_later\)/);
    } finally {
      await db.destroy();
    }
  });

  it('a start logs each migration it applies and names the release when it listens', async () => {
    const url = fresh();
    const instance = await startInstance({
      DATABASE_URL: url,
      TESSERA_DATA_DIR: dir,
      TESSERA_SECRET: 'the-secret-of-the-release-test-0123456789',
      LOG_LEVEL: 'info',
    });
    try {
      const lines = jsonLines(instance.output());
      assert.deepEqual(
        lines.filter((l) => l.migration !== undefined).map((l) => [l.migration, l.version]),
        ALL.map((name) => [name, VERSION]),
      );
      const listening = lines.find((l) => String(l.msg).includes('is listening on'));
      assert.equal(listening?.version, VERSION);
      assert.match(String(listening?.msg), new RegExp(`^Tessera ${VERSION.replaceAll('.', '\\.')} is listening on`));
    } finally {
      await instance.stop();
    }
  });
});
