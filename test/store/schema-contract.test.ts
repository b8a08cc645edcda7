// Expand/contract (docs/upgrades.md): a migration newer than the previous release (release/previous.json)
// takes nothing away that the previous release uses. Each one runs on the schema before it, on SQLite
// and PostgreSQL, and the schema is compared before and after: no table, column or index dropped or
// renamed, no type changed, no column made NOT NULL or stripped of its default, no NOT NULL column
// without a default added to a table, no unique index added to one. A contraction made on purpose, two
// releases after the last one that used what it removes, is declared by the migration itself
// (`export const contracts = ['drops column users.nickname']`). The comparison is checked too: each
// kind of contraction, made by hand, is found.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { openDatabase } from '../../src/store/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { previousRelease, unlessMissing } from '../helpers/previous-release.ts';
import { withPostgresDatabase, withSqliteDatabase } from './databases.ts';
import { contractions, snapshot } from './schema.ts';

const git = promisify(execFile);

/** The migrations of the previous release, from its commit's src/store/migrations/. */
async function previousMigrations(commit: string): Promise<string[]> {
  const { stdout } = await git('git', ['ls-tree', '--name-only', `${commit}:src/store/migrations/`]);
  return stdout
    .split('\n')
    .filter((file) => /^\d+_.*\.ts$/.test(file))
    .map((file) => file.replace(/\.ts$/, ''));
}

async function migrateTo(db: Kysely<unknown>, names: string[]): Promise<void> {
  const chosen = Object.fromEntries(names.map((name) => [name, migrations[name]!]));
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => chosen },
    migrationTableName: 'tessera_migrations',
    migrationLockTableName: 'tessera_migrations_lock',
    allowUnorderedMigrations: true,
  }).migrateToLatest();
  if (error) throw error;
}

for (const [name, database] of [
  ['SQLite', withSqliteDatabase],
  ['PostgreSQL', withPostgresDatabase],
] as const) {
  describe(`migrations after the previous release on ${name}`, async () => {
    const db = await database();
    const side = db && (openDatabase(db.url) as Kysely<unknown>);
    after(async () => {
      await side?.destroy();
      await db?.drop();
    });

    it('take nothing away that the previous release uses', async (t) => {
      if (!db) return t.skip(`${name} unreachable`);
      const { version, commit } = previousRelease();
      if (!(await unlessMissing(commit))) return t.skip(`release ${version} is not in this clone`);
      const released = await previousMigrations(commit);
      assert.ok(released.includes('001_initial'), `the migrations of ${version}: ${released.join(', ')}`);
      const newer = Object.keys(migrations).filter((m) => !released.includes(m));
      t.diagnostic(`newer than ${version}: ${newer.join(', ') || 'none'}`);

      await migrateTo(side!, released);
      const applied: string[] = [...released];
      for (const migration of newer) {
        const before = await snapshot(side!, name);
        applied.push(migration);
        await migrateTo(side!, applied);
        const declared = (migrations[migration] as Migration & { contracts?: string[] }).contracts ?? [];
        const found = contractions(before, await snapshot(side!, name)).filter((c) => !declared.includes(c));
        assert.deepEqual(found, [], `${migration} contracts the schema release ${version} runs on`);
      }
    });

    // Each kind of contraction, on a table made for it: [what is done, what must be found].
    const kinds: Array<[string, string[], string[]]> = [
      ['a table dropped', ['drop table t'], ['drops table t', 'drops index t_a']],
      ['a table renamed', ['alter table t rename to t_new'], ['drops table t', 'changes index t_a']],
      ['a column dropped', ['alter table t drop column b'], ['drops column t.b']],
      ['a column renamed', ['alter table t rename column b to b2'], ['drops column t.b']],
      ['an index dropped', ['drop index t_a'], ['drops index t_a']],
      ['a unique index added', ['create unique index t_b on t (b)'], ['adds unique index t_b to t']],
      [
        'a nullable column added, and a new table',
        ['alter table t add column d text', 'create table u (x text not null)'],
        [],
      ],
      ['a NOT NULL column with a default added', [`alter table t add column d text not null default 'x'`], []],
    ];
    const rebuild = (columns: string) => [
      `create table t_new (${columns})`,
      'insert into t_new (a, b, c) select a, b, c from t',
      'drop table t',
      'alter table t_new rename to t',
      'create index t_a on t (a)',
    ];
    if (name === 'PostgreSQL')
      kinds.push(
        [
          'a NOT NULL column without a default added',
          ['alter table t add column d text not null'],
          ['adds t.d NOT NULL without a default'],
        ],
        ['a type changed', ['alter table t alter column b type text'], ['changes the type of t.b (int4 to text)']],
        ['a column made NOT NULL', ['alter table t alter column b set not null'], ['makes t.b NOT NULL']],
        ['a default removed', ['alter table t alter column c drop default'], ['removes the default of t.c']],
      );
    else
      // SQLite changes a column by rebuilding its table.
      kinds.push(
        [
          'a NOT NULL column without a default added',
          rebuild(`a text not null, b integer, c text default 'x', d text not null`),
          ['adds t.d NOT NULL without a default'],
        ],
        [
          'a type changed',
          rebuild(`a text not null, b text, c text default 'x'`),
          ['changes the type of t.b (integer to text)'],
        ],
        [
          'a column made NOT NULL',
          rebuild(`a text not null, b integer not null, c text default 'x'`),
          ['makes t.b NOT NULL'],
        ],
        ['a default removed', rebuild('a text not null, b integer, c text'), ['removes the default of t.c']],
      );
    for (const [kind, statements, expected] of kinds)
      it(expected.length > 0 ? `finds ${kind}` : `finds nothing wrong with ${kind}`, async (t) => {
        if (!db) return t.skip(`${name} unreachable`);
        try {
          await sql.raw(`create table t (a text not null, b integer, c text default 'x')`).execute(side!);
          await sql.raw('create index t_a on t (a)').execute(side!);
          const before = await snapshot(side!, name);
          for (const statement of statements) await sql.raw(statement).execute(side!);
          assert.deepEqual(contractions(before, await snapshot(side!, name)).sort(), [...expected].sort());
        } finally {
          for (const table of ['t', 't_new', 'u']) await sql.raw(`drop table if exists ${table}`).execute(side!);
        }
      });
  });
}

describe('a previous release whose commit is not in the clone', () => {
  it('is named with the reason, skipped outside CI and a failure under CI=true', async () => {
    const commit = 'f'.repeat(40);
    const ci = process.env.CI;
    try {
      process.env.CI = 'true';
      await assert.rejects(
        unlessMissing(commit),
        new RegExp(
          `the previous release's commit ${commit} \\(release/previous.json\\) is not in this clone.*required under CI`,
        ),
      );
      process.env.CI = 'false';
      assert.equal(await unlessMissing(commit), undefined);
    } finally {
      if (ci === undefined) delete process.env.CI;
      else process.env.CI = ci;
    }
  });
});
