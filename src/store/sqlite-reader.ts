// The event loop's connection to SQLite when a worker thread does the writing (./worker-store.ts):
// it only reads, so the reads every request makes run as statements prepared once, not through
// Kysely, whose building and compiling cost three times SQLite's own work for a lookup by key
// (bench/RESULTS.md, item 11). Every other read is the KyselyStore's.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import { sqliteDialect } from './dialects/sqlite.ts';
import {
  accessTokenStateSql, refreshTokenFamilySql, sessionAndUserSql, sqliteParameter, toAccessTokenState, toRefreshTokenFamily, toSessionAndUser, tokenFamilySql, toTokenFamily,
} from './joins.ts';
import { KyselyStore, toUser } from './kysely-store.ts';
import type { User } from './store.ts';
import type { Database, GrantRow, UserRow } from './types.ts';

const QUERIES = {
  user: 'select * from users where id = ?',
  sessionAndUser: sessionAndUserSql(sqliteParameter, false),
  sessionUserAndConsent: sessionAndUserSql(sqliteParameter, true),
  consent: 'select scope from consents where user_id = ? and client_id = ?',
  grant: 'select * from grants where id = ?',
  accessTokenState: accessTokenStateSql(sqliteParameter),
  tokenFamily: tokenFamilySql(sqliteParameter),
  refreshTokenFamily: refreshTokenFamilySql(sqliteParameter),
};

export class SqliteReaderStore extends KyselyStore {
  readonly #sqlite: DatabaseSync;
  // Prepared on first use: the writer migrates the database after this connection opens.
  #statements: Record<keyof typeof QUERIES, StatementSync> | undefined;

  constructor(sqlite: DatabaseSync) {
    super(new Kysely<Database>({ dialect: sqliteDialect(sqlite) }), 'sqlite', sqlite);
    this.#sqlite = sqlite;
  }

  #get<T>(query: keyof typeof QUERIES, ...args: Array<string | number>): T | undefined {
    this.#statements ??= Object.fromEntries(Object.entries(QUERIES).map(([name, text]) => [name, this.#sqlite.prepare(text)])) as Record<keyof typeof QUERIES, StatementSync>;
    return this.#statements[query].get(...args) as T | undefined;
  }

  override async getUserById(id: string): Promise<User | undefined> {
    const row = this.#get<UserRow>('user', id);
    return row ? toUser(row) : undefined;
  }
  override async getConsentedScopes(userId: string, clientId: string): Promise<string[]> {
    const row = this.#get<{ scope: string }>('consent', userId, clientId);
    return row ? row.scope.split(' ').filter((s) => s !== '') : [];
  }
  override async getGrant(id: string) {
    return this.#get<GrantRow>('grant', id);
  }
  override async getAccessTokenState(input: { userId: string; grantId: string; jti: string }) {
    return toAccessTokenState(this.#get<Record<string, unknown>>('accessTokenState', input.userId, input.grantId, input.jti));
  }
  override async getTokenFamily(grantId: string) {
    return toTokenFamily(this.#get<Record<string, unknown>>('tokenFamily', grantId));
  }
  override async getRefreshTokenFamily(tokenHash: string) {
    return toRefreshTokenFamily(this.#get<Record<string, unknown>>('refreshTokenFamily', tokenHash));
  }
  override async getSessionAndUser(id: string, now: number, clientId?: string) {
    const row = clientId === undefined ? this.#get<Record<string, unknown>>('sessionAndUser', id, now) : this.#get<Record<string, unknown>>('sessionUserAndConsent', id, now, clientId);
    return toSessionAndUser(row);
  }
}
