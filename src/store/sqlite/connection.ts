// A small Kysely dialect over Node's built-in node:sqlite: Kysely's SqliteDialect driven through an
// adapter that gives DatabaseSync the better-sqlite3-shaped interface Kysely expects.
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';

function adapt(statement: StatementSync): SqliteStatement {
  const reader = statement.columns().length > 0;
  return {
    reader,
    all: (parameters) => statement.all(...(parameters as SQLInputValue[])),
    run: (parameters) => statement.run(...(parameters as SQLInputValue[])),
    iterate: (parameters) => statement.iterate(...(parameters as SQLInputValue[])),
  };
}

/** Opens `path` (or ':memory:') with durable WAL settings. */
export function openSqlite(path: string): DatabaseSync {
  if (path !== ':memory:') {
    // Readable by the owner only: the folder (0700, when this creates it) and the database (0600,
    // created empty here before SQLite opens it; SQLite gives its -wal and -shm files the same mode).
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(path, 'wx', 0o600));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (err) {
    // SQLite's own message ("unable to open database file") names no file: this one does. The
    // error is otherwise kept as it is, so that ./faults.ts still knows it.
    if (err instanceof Error) err.message = `SQLite database ${path}: ${err.message}`;
    throw err;
  }
  // WAL lets readers run beside the writer; synchronous=FULL makes every commit durable before the
  // response that depends on it is sent.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  return db;
}

export function sqliteDialect(db: DatabaseSync): SqliteDialect {
  // Prepared once per SQL text: Kysely compiles the same statements again and again.
  const statements = new Map<string, SqliteStatement>();
  const database: SqliteDatabase = {
    // An in-memory database has one connection for the reader and the writer: closed once.
    close: () => (db.isOpen ? db.close() : undefined),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = adapt(db.prepare(sql));
        statements.set(sql, statement);
      }
      return statement;
    },
  };
  return new SqliteDialect({ database });
}
