// The two writes of every token request on SQLite — redeeming a code and rotating a refresh token —
// as statements prepared once on the writing connection. Through Kysely, building and compiling
// their three or four statements cost more CPU than SQLite's work (bench/RESULTS.md, item 11);
// PostgreSQL has its own one-statement forms in ./kysely-store.ts. They run inside the group
// commit's savepoint (./group-commit.ts), which holds the connection.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { GRANT_COLUMNS, REFRESH_TOKEN_COLUMNS } from './columns.ts';
import type { GrantRow, RefreshTokenRow } from './types.ts';

function insert(table: string, columns: readonly string[]): string {
  return `insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `:${c}`).join(', ')})`;
}

export class SqliteWrites {
  readonly #db: DatabaseSync;
  // Prepared on first use: the tables exist only once the store is migrated.
  #statements: Record<'insertGrant' | 'insertRefreshToken' | 'consumeRefreshToken', StatementSync> | undefined;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  get #prepared() {
    return (this.#statements ??= {
      // The WHERE also settles SQLite's parsing of ON CONFLICT after INSERT … SELECT.
      insertGrant: this.#db.prepare(`insert into grants (${GRANT_COLUMNS.join(', ')}) select ${GRANT_COLUMNS.map((c) => `:${c}`).join(', ')}
        where exists (select 1 from users where id = :user_id and disabled = 0) on conflict (id) do nothing`),
      insertRefreshToken: this.#db.prepare(insert('refresh_tokens', REFRESH_TOKEN_COLUMNS)),
      consumeRefreshToken: this.#db.prepare('update refresh_tokens set consumed_at = :now where token_hash = :token_hash and consumed_at is null'),
    });
  }

  /** Inserts the grant (keyed on the code's id) and, only if it is the first and its user active, its refresh token. */
  redeemAuthorizationCode(grant: GrantRow, refreshToken: RefreshTokenRow | null): boolean {
    const s = this.#prepared;
    if (s.insertGrant.run(pick(grant, GRANT_COLUMNS)).changes !== 1) return false;
    if (refreshToken) s.insertRefreshToken.run(pick(refreshToken, REFRESH_TOKEN_COLUMNS));
    return true;
  }

  /** Consumes the token `tokenHash` and, only if it was still unused, stores `next`. */
  rotateRefreshToken(tokenHash: string, now: number, next: RefreshTokenRow): boolean {
    const s = this.#prepared;
    if (s.consumeRefreshToken.run({ now, token_hash: tokenHash }).changes !== 1) return false;
    s.insertRefreshToken.run(pick(next, REFRESH_TOKEN_COLUMNS));
    return true;
  }
}

/** Exactly the named parameters of the statement (node:sqlite refuses unknown ones). */
function pick<T extends object>(row: T, columns: ReadonlyArray<keyof T>): Record<string, string | number | null> {
  const values: Record<string, string | number | null> = {};
  for (const column of columns) values[column as string] = row[column] as string | number | null;
  return values;
}
