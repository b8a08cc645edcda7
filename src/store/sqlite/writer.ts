// SQLite's writes, on a connection that does nothing else: the statements of each write run in one
// savepoint of the next group commit (./group-commit.ts), each prepared once per SQL text. The server
// runs this on a worker thread of its own (./writer-thread.ts), so that commits and their fsyncs
// never stall the event loop; short-lived commands run it in their own thread.
import { Kysely, type NoMigrations } from 'kysely';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { FaultCounter } from '../faults.ts';
import { migrate } from '../migrations/index.ts';
import type { Database } from '../tables.ts';
import { sqliteDialect } from './connection.ts';
import { isReadOnly, isSqliteFault } from './faults.ts';
import { GroupCommit } from './group-commit.ts';

/** A statement and its parameters, as Kysely compiles it or as written out by hand (./statements.ts). */
export interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** What a statement returned, in the shape of Kysely's QueryResult. */
export interface Result {
  rows: unknown[];
  numAffectedRows: bigint;
}

export class SqliteWriter {
  #sqlite: DatabaseSync;
  #group: GroupCommit;
  readonly #prepared = new Map<string, StatementSync>();
  readonly #faults = new FaultCounter();
  readonly #reopen: (() => DatabaseSync) | undefined;
  #stale = false;

  /**
   * `reopen` opens the file again: after a write refused because the file was read-only or could not
   * be opened, the next write uses a new connection, so that fixing the file's permissions is enough.
   */
  constructor(sqlite: DatabaseSync, reopen?: () => DatabaseSync) {
    this.#sqlite = sqlite;
    this.#group = new GroupCommit(sqlite);
    this.#reopen = reopen;
  }

  #freshConnection(): void {
    if (!this.#stale || !this.#reopen || this.#group.queued > 0) return;
    const sqlite = this.#reopen();
    this.#sqlite.close();
    this.#prepared.clear();
    this.#sqlite = sqlite;
    this.#group = new GroupCommit(sqlite);
    this.#stale = false;
  }

  #statement(sql: string): StatementSync {
    let statement = this.#prepared.get(sql);
    if (!statement) this.#prepared.set(sql, (statement = this.#sqlite.prepare(sql)));
    return statement;
  }

  /**
   * Runs the statements together, all or none, in the next group commit; resolves after the commit.
   * A full disk or a read-only file rejects with DatabaseUnavailable, and the next write tries again.
   */
  execute(statements: Statement[]): Promise<Result[]> {
    try {
      this.#freshConnection();
    } catch (error) {
      return Promise.reject(this.#faults.translate(error, isSqliteFault));
    }
    return this.#group
      .run(() =>
        statements.map(({ sql, parameters }) => {
          const statement = this.#statement(sql);
          const values = parameters as SQLInputValue[];
          if (statement.columns().length > 0) return { rows: statement.all(...values), numAffectedRows: 0n };
          return { rows: [], numAffectedRows: BigInt(statement.run(...values).changes) };
        }),
      )
      .catch((error: unknown) => {
        if (isReadOnly(error)) this.#stale = true;
        throw this.#faults.translate(error, isSqliteFault);
      });
  }

  /** Writes waiting for the next commit, and the faults seen. */
  stats(): { queued: number; faults: number } {
    return { queued: this.#group.queued, faults: this.#faults.count };
  }

  /** Before any other write: migrations run outside the group commit. */
  async migrate(to?: string | NoMigrations): Promise<string[]> {
    const db = new Kysely<Database>({ dialect: sqliteDialect(this.#sqlite) });
    this.#prepared.clear();
    return migrate(db, to);
  }

  async close(): Promise<void> {
    if (this.#sqlite.isOpen) this.#sqlite.close();
  }
}
