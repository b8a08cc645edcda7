// openStore(DATABASE_URL): `sqlite:<path>` (default; `sqlite::memory:` too) or `postgres://…`.
import { resolve } from 'node:path';
import { Kysely } from 'kysely';
import { openSqlite, sqliteDialect } from './dialects/sqlite.ts';
import { postgresDialect, postgresPool } from './dialects/postgres.ts';
import { KyselyStore } from './kysely-store.ts';
import type { Store } from './store.ts';
import type { Database } from './types.ts';

export type { Store } from './store.ts';

export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path === '') throw new Error('DATABASE_URL: sqlite: needs a path, e.g. sqlite:./data/tessera.db');
    const db = openSqlite(path === ':memory:' ? path : resolve(path));
    return new KyselyStore(new Kysely<Database>({ dialect: sqliteDialect(db) }), 'sqlite');
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = postgresPool(databaseUrl);
    const store = new KyselyStore(new Kysely<Database>({ dialect: postgresDialect(pool) }), 'postgres');
    return store;
  }
  throw new Error('DATABASE_URL: expected sqlite:<path> or postgres://…');
}
