// The two writes of every token request on SQLite — redeeming a code and rotating a refresh token —
// as statements prepared once on the writing connection. Through Kysely, building and compiling
// their statements cost more CPU than SQLite's work (bench/RESULTS.md, item 11); PostgreSQL has its
// own one-statement forms in ./kysely-store.ts. They run inside the group commit's savepoint
// (./group-commit.ts), which holds the connection.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { GRANT_COLUMNS } from './columns.ts';
import type { GrantRow } from './types.ts';

export class SqliteWrites {
  readonly #db: DatabaseSync;
  // Prepared on first use: the tables exist only once the store is migrated.
  #statements: Record<'insertGrant' | 'rotateFamily', StatementSync> | undefined;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get #prepared() {
    return (this.#statements ??= {
      // The WHERE also settles SQLite's parsing of ON CONFLICT after INSERT … SELECT.
      insertGrant: this.#db.prepare(`insert into grants (${GRANT_COLUMNS.join(', ')}) select ${GRANT_COLUMNS.map((c) => `:${c}`).join(', ')}
        where exists (select 1 from users where id = :user_id and disabled = 0) on conflict (id) do nothing`),
      rotateFamily: this.#db.prepare(`update grants set refresh_generation = :generation + 1, refresh_issued_at = :now, refresh_expires_at = :expires_at
        where id = :id and refresh_generation = :generation and revoked_at is null`),
    });
  }

  /** Inserts the grant (keyed on the code's id) only if it is the first and its user active. */
  redeemAuthorizationCode(grant: GrantRow): boolean {
    return this.#prepared.insertGrant.run(pick(grant, GRANT_COLUMNS)).changes === 1;
  }

  /** Moves the grant to the next generation only while it is at `generation` and not revoked. */
  rotateTokenFamily(input: { grantId: string; generation: number; now: number; expiresAt: number }): boolean {
    const { grantId: id, generation, now, expiresAt: expires_at } = input;
    return this.#prepared.rotateFamily.run({ id, generation, now, expires_at }).changes === 1;
  }
}

/** Exactly the named parameters of the statement (node:sqlite refuses unknown ones). */
function pick<T extends object>(row: T, columns: ReadonlyArray<keyof T>): Record<string, string | number | null> {
  const values: Record<string, string | number | null> = {};
  for (const column of columns) values[column as string] = row[column] as string | number | null;
  return values;
}
