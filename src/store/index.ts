// openStore(DATABASE_URL): `sqlite:<path>` (default; `sqlite::memory:` too) or `postgres://…`.
import { resolve } from 'node:path';
import { Kysely } from 'kysely';
import { openSqlite, sqliteDialect } from './dialects/sqlite.ts';
import { postgresDialect, postgresPool } from './dialects/postgres.ts';
import { KyselyStore } from './kysely-store.ts';
import { SqliteReaderStore } from './sqlite-reader.ts';
import type { Store } from './store.ts';
import type { Database } from './types.ts';
import { openWorkerStore } from './worker-store.ts';

export type { Store } from './store.ts';

/**
 * `thread: 'worker'` (what the server uses) writes to SQLite from a worker thread of its own and
 * reads on the calling thread (./worker-store.ts); `'current'` does both on the calling thread,
 * which suits short-lived commands. PostgreSQL is asynchronous already and ignores the option, and
 * so does `sqlite::memory:` (a second connection would see another database). `pgPreparedStatements`
 * (default true) names PostgreSQL statements (./dialects/postgres.ts).
 */
export async function openStore(databaseUrl: string, options: { thread?: 'worker' | 'current'; pgPreparedStatements?: boolean } = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path === '') throw new Error('DATABASE_URL: sqlite: needs a path, e.g. sqlite:./data/tessera.db');
    const file = path === ':memory:' ? path : resolve(path);
    const sqlite = openSqlite(file);
    if (options.thread === 'worker' && file !== ':memory:') {
      const store = openWorkerStore(`sqlite:${file}`, new SqliteReaderStore(sqlite));
      // Opening fails here, not on the first request, when the file cannot be opened.
      await store.ping();
      return store;
    }
    return new KyselyStore(new Kysely<Database>({ dialect: sqliteDialect(sqlite) }), 'sqlite', sqlite);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return new KyselyStore(new Kysely<Database>({ dialect: postgresDialect(postgresPool(databaseUrl), options.pgPreparedStatements ?? true) }), 'postgres');
  }
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}
