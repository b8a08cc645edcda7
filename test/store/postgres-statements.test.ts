// PostgreSQL named statements (src/store/postgres/connection.ts): prepared once per connection, and
// still correct when the schema changes under a prepared statement.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { prepareStatements } from '../../src/store/postgres/connection.ts';
import { openStore } from '../../src/store/index.ts';
import type { PostgresStore } from '../../src/store/postgres/store.ts';
import { type TestDatabase, withPostgresDatabase } from './databases.ts';

describe('PostgreSQL named statements', () => {
  let db: TestDatabase | undefined;
  let pool: pg.Pool;
  before(async () => {
    db = await withPostgresDatabase();
    if (db) pool = new pg.Pool({ connectionString: db.url, max: 1 });
  });
  after(async () => {
    if (db) {
      await pool.end();
      await db.drop();
    }
  });

  it('a text is parsed once per connection, then only bound and executed', async (t) => {
    if (!db) return t.skip('no PostgreSQL');
    const client = prepareStatements(await pool.connect());
    try {
      await client.query('create table t (id int primary key, a text)');
      await client.query('insert into t values ($1, $2)', [1, 'one']);
      await client.query('insert into t values ($1, $2)', [2, 'two']);
      const { rows } = await client.query('select * from t where id = $1', [2]);
      assert.deepEqual(rows, [{ id: 2, a: 'two' }]);
      const statements = await client.query<{ statement: string }>(
        'select statement from pg_prepared_statements order by statement',
        [],
      );
      const texts = statements.rows.map((r) => r.statement);
      assert.ok(texts.includes('insert into t values ($1, $2)'), texts.join('\n'));
      assert.ok(texts.includes('select * from t where id = $1'), texts.join('\n'));
      assert.equal(texts.filter((s) => s.startsWith('insert into t')).length, 1);
    } finally {
      client.release();
    }
  });

  it('a statement prepared before the table changed is sent again unnamed', async (t) => {
    if (!db) return t.skip('no PostgreSQL');
    const client = prepareStatements(await pool.connect());
    try {
      assert.deepEqual((await client.query('select * from t where id = $1', [1])).rows, [{ id: 1, a: 'one' }]);
      // What another instance's migration would do.
      await client.query('alter table t add column b text', []);
      await client.query('update t set b = $1 where id = $2', ['uno', 1]);
      assert.deepEqual((await client.query('select * from t where id = $1', [1])).rows, [
        { id: 1, a: 'one', b: 'uno' },
      ]);
      assert.deepEqual((await client.query('select * from t where id = $1', [2])).rows, [{ id: 2, a: 'two', b: null }]);
    } finally {
      client.release();
    }
  });

  it('the store names its statements unless TESSERA_PG_PREPARED_STATEMENTS is false', async (t) => {
    if (!db) return t.skip('no PostgreSQL');
    for (const pgPreparedStatements of [true, false]) {
      const store = (await openStore(db.url, { pgPreparedStatements })) as PostgresStore;
      try {
        await store.migrate();
        await store.getUserById('nobody');
        await store.getUserById('nobody');
        // One connection at a time here: the pool hands the same idle client back.
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_prepared_statements where statement like '%from "users"%'`.execute(
          store.db,
        );
        assert.equal(rows[0]!.n > 0, pgPreparedStatements, `pgPreparedStatements: ${pgPreparedStatements}`);
        // Named statements are planned once (the generic plan), not again for each execution's values.
        const mode = await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(store.db);
        assert.equal(mode.rows[0]!.plan_cache_mode, pgPreparedStatements ? 'force_generic_plan' : 'auto');
      } finally {
        await store.close();
      }
    }
  });

  it('the pool holds TESSERA_PG_POOL_SIZE connections at most; callers beyond wait, and the metrics see it', async (t) => {
    if (!db) return t.skip('no PostgreSQL');
    const store = await openStore(db.url, { pgPoolSize: 2 });
    try {
      const queries = Array.from({ length: 5 }, () => sql`select pg_sleep(0.2)`.execute((store as PostgresStore).db));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const busy = store.stats();
      assert.equal(busy.open, 2);
      assert.equal(busy.inUse, 2);
      assert.equal(busy.waiting, 3);
      await Promise.all(queries);
      assert.equal(store.stats().waiting, 0);
    } finally {
      await store.close();
    }
  });
});
