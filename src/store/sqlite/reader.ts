// The reads every request makes, as statements prepared once on the event loop's SQLite connection:
// through Kysely, building and compiling them costs three times SQLite's own work for a lookup by key
// (bench/RESULTS.md, item 11). In WAL mode these reads never wait for the writer (./writer.ts).
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { splitScope, toAccessTokenState, toSessionAndUser, toTokenFamily, toUser } from '../rows.ts';
import type { GrantRow, UserRow } from '../types.ts';
import { READS } from './statements.ts';

type Row = Record<string, unknown>;

export class SqliteReader {
  readonly #sqlite: DatabaseSync;
  // Prepared on first use: the tables exist only once the database is migrated.
  #statements: Record<keyof typeof READS, StatementSync> | undefined;

  constructor(sqlite: DatabaseSync) {
    this.#sqlite = sqlite;
  }

  #get<T = Row>(query: keyof typeof READS, ...args: Array<string | number>): T | undefined {
    this.#statements ??= Object.fromEntries(
      Object.entries(READS).map(([name, text]) => [name, this.#sqlite.prepare(text)]),
    ) as Record<keyof typeof READS, StatementSync>;
    return this.#statements[query].get(...args) as T | undefined;
  }

  user(id: string) {
    const row = this.#get<UserRow>('user', id);
    return row && toUser(row);
  }
  consentedScopes(userId: string, clientId: string) {
    return splitScope(this.#get<{ scope: string }>('consent', userId, clientId)?.scope);
  }
  grant(id: string) {
    return this.#get<GrantRow>('grant', id);
  }
  accessTokenState(userId: string, grantId: string, jti: string) {
    return toAccessTokenState(this.#get('accessTokenState', userId, grantId, jti));
  }
  tokenFamily(grantId: string) {
    return toTokenFamily(this.#get('tokenFamily', grantId));
  }
  sessionAndUser(id: string, now: number, clientId?: string) {
    return toSessionAndUser(
      clientId === undefined
        ? this.#get('sessionAndUser', id, now)
        : this.#get('sessionUserAndConsent', id, now, clientId),
    );
  }
}
