// openStore(DATABASE_URL): `sqlite:<path>` (default; `sqlite::memory:` too) or `postgres://…`.
import { Kysely } from 'kysely';
import { resolve } from 'node:path';
import { PostgresStore } from './postgres/store.ts';
import { openSqlite, sqliteDialect } from './sqlite/connection.ts';
import { SqliteStore } from './sqlite/store.ts';
import { WriterThread } from './sqlite/writer-thread.ts';
import { SqliteWriter } from './sqlite/writer.ts';
import type { Store } from './store.ts';
import type { Database } from './tables.ts';

export type { Store } from './store.ts';

export function sqlitePath(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '') throw new Error('DATABASE_URL: sqlite: needs a path, e.g. sqlite:./data/tessera.db');
  return path === ':memory:' ? path : resolve(path);
}

const isPostgres = (databaseUrl: string) => /^postgres(ql)?:\/\//.test(databaseUrl);

/**
 * SQLite reads on the calling thread and writes on a connection of its own: on a worker thread with
 * `thread: 'worker'` (what the server uses), else on the calling thread, which suits short-lived
 * commands. `sqlite::memory:` has one connection (a second would see another database).
 * `pgPreparedStatements` (default true) names PostgreSQL statements (./postgres/connection.ts);
 * `pgPoolSize` (default 10) caps PostgreSQL's connections.
 */
export async function openStore(
  databaseUrl: string,
  options: { thread?: 'worker' | 'current'; pgPreparedStatements?: boolean; pgPoolSize?: number } = {},
): Promise<Store> {
  const file = sqlitePath(databaseUrl);
  if (file === ':memory:') {
    const sqlite = openSqlite(file);
    return new SqliteStore(sqlite, new SqliteWriter(sqlite));
  }
  if (file !== undefined) {
    // Opening fails here, not on the first request, when the file cannot be opened.
    const reader = openSqlite(file);
    const writer =
      options.thread === 'worker' ? new WriterThread(file) : new SqliteWriter(openSqlite(file), () => openSqlite(file));
    return new SqliteStore(reader, writer);
  }
  if (isPostgres(databaseUrl)) {
    return new PostgresStore(databaseUrl, {
      namedStatements: options.pgPreparedStatements ?? true,
      poolSize: options.pgPoolSize ?? 10,
    });
  }
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}

/** A plain Kysely connection to the database, for looking behind the Store (tests, the benchmark's seeding). */
export function openDatabase(databaseUrl: string): Kysely<Database> {
  const file = sqlitePath(databaseUrl);
  if (file !== undefined) return new Kysely<Database>({ dialect: sqliteDialect(openSqlite(file)) });
  if (isPostgres(databaseUrl)) return new PostgresStore(databaseUrl, { namedStatements: false }).db;
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}
