// SQLite's writes, on the connection that does nothing else: every write joins the next group commit
// (./group-commit.ts), and the two writes of every token request run as statements prepared once.
// The server runs this on a worker thread of its own (./writer-thread.ts), so that commits and their
// fsyncs never stall the event loop; short-lived commands run it in their own thread.
import { Kysely } from 'kysely';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Repository } from '../repository.ts';
import { GRANT_COLUMNS } from '../rows.ts';
import type { Database, GrantRow } from '../types.ts';
import { sqliteDialect } from './connection.ts';
import { GroupCommit } from './group-commit.ts';
import { WRITES } from './statements.ts';

export interface Advance {
  grantId: string;
  generation: number;
  now: number;
  expiresAt: number;
}

export class SqliteWriter extends Repository {
  readonly #sqlite: DatabaseSync;
  readonly #group: GroupCommit;
  // Prepared on first use: the tables exist only once the database is migrated.
  #statements: Record<keyof typeof WRITES, StatementSync> | undefined;

  constructor(sqlite: DatabaseSync) {
    const db = new Kysely<Database>({ dialect: sqliteDialect(sqlite) });
    const group = new GroupCommit(db, sqlite);
    super(db, (n) => `?${n}`, (op) => group.run(op));
    this.#sqlite = sqlite;
    this.#group = group;
  }

  get #prepared() {
    return (this.#statements ??= {
      insertGrant: this.#sqlite.prepare(WRITES.insertGrant),
      advanceFamily: this.#sqlite.prepare(WRITES.advanceFamily),
    });
  }

  /** Inserts the grant (keyed on the code's id) only if it is the first and its user is active. */
  redeemAuthorizationCode(grant: GrantRow): Promise<boolean> {
    const values: Record<string, string | number | null> = {};
    for (const column of GRANT_COLUMNS) values[column] = grant[column];
    return this.#group.run(async () => this.#prepared.insertGrant.run(values).changes === 1);
  }

  /** Moves the grant to the next generation only while it is at `generation` and not revoked. */
  advanceTokenFamily({ grantId, generation, now, expiresAt }: Advance): Promise<boolean> {
    const parameters = { id: grantId, generation, now, expires_at: expiresAt };
    return this.#group.run(async () => this.#prepared.advanceFamily.run(parameters).changes === 1);
  }
}
