// The event loop's SQLite connection runs the reads written out by hand (../grants.ts, ../sessions.ts,
// ../users.ts) as statements prepared once per SQL text: through Kysely, building and compiling them
// costs three times SQLite's own work for a lookup by key (bench/RESULTS.md, item 11). In WAL mode
// they never wait for the writer.
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';

export class SqliteReader {
  readonly #sqlite: DatabaseSync;
  readonly #prepared = new Map<string, StatementSync>();

  constructor(sqlite: DatabaseSync) {
    this.#sqlite = sqlite;
  }

  rows(sql: string, parameters: unknown[]): unknown[] {
    let statement = this.#prepared.get(sql);
    if (!statement) this.#prepared.set(sql, (statement = this.#sqlite.prepare(sql)));
    return statement.all(...(parameters as SQLInputValue[]));
  }
}
