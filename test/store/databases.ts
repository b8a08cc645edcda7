// Throwaway databases for tests: a temporary SQLite file, and a PostgreSQL database created for the
// test and dropped afterwards. PostgreSQL tests skip when the server is unreachable, except under
// CI=true, where they must run.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/store.ts';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function withSqliteDatabase(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-store-'));
  return { url: `sqlite:${join(dir, 'store.db')}`, drop: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh PostgreSQL database, or undefined (with a reason printed) when none can be had outside CI.
 * `adminUrl` is where it is created; the new database's address is the same with its name.
 */
export async function withPostgresDatabase(adminUrl = ADMIN_URL): Promise<TestDatabase | undefined> {
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (err) {
    if (process.env.CI === 'true')
      throw new Error(`PostgreSQL is required under CI: ${(err as Error).message}`, { cause: err });
    console.warn(`skipping PostgreSQL tests: ${(err as Error).message}`);
    return undefined;
  }
  const name = `tessera_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // Without FORCE: the pools closed just before may still be saying goodbye; wait for them
        // rather than terminate them (a terminated client reports an error asynchronously).
        for (let attempt = 0; ; attempt++) {
          try {
            await client.query(`DROP DATABASE IF EXISTS ${name}`);
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      } finally {
        await client.end();
      }
    },
  };
}

/** A store on `database`, migrated to the newest schema. */
export async function migratedStore(database: TestDatabase): Promise<Store> {
  const store = await openStore(database.url);
  await store.migrate();
  return store;
}

/** After a suite: its store closed and its database dropped, either of them perhaps never made. */
export async function closeStore(store: Store | undefined, database: TestDatabase | undefined): Promise<void> {
  await store?.close();
  await database?.drop();
}
