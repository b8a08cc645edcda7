// The one Store implementation, over Kysely, for SQLite and PostgreSQL alike.
import { CompiledQuery, type Kysely, Migrator, sql } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import type { Client, RotateValidTokenFamily, Store, User } from './store.ts';
import type { ClientRow, Database, GrantRow, UserRow } from './types.ts';
import { ClientCache } from './client-cache.ts';
import { GroupCommit } from './group-commit.ts';
import { SqliteWrites } from './sqlite-writes.ts';
import { PostgresBatches } from './postgres-batches.ts';
import {
  accessTokenStateSql, type Placeholder, postgresParameter, refreshTokenFamilySql, sessionAndUserSql, sqliteParameter, toRefreshTokenFamily,
  toAccessTokenState, toSessionAndUser, type TokenFamily, tokenFamilySql, toTokenFamily,
} from './joins.ts';
import { migrations } from './migrations/index.ts';

function toClient(row: ClientRow): Client {
  return {
    clientId: row.client_id,
    secretHash: row.secret_hash,
    name: row.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    scopes: row.scope.split(' ').filter((s) => s !== ''),
    grantTypes: JSON.parse(row.grant_types) as string[],
    tokenEndpointAuthMethod: row.token_endpoint_auth_method,
    firstParty: row.first_party === 1,
    idTokenSignedResponseAlg: row.id_token_signed_response_alg,
    createdAt: row.created_at,
  };
}

function fromClient(client: Client): ClientRow {
  return {
    client_id: client.clientId,
    secret_hash: client.secretHash,
    name: client.name,
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    scope: client.scopes.join(' '),
    grant_types: JSON.stringify(client.grantTypes),
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    first_party: client.firstParty ? 1 : 0,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    created_at: client.createdAt,
  };
}

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified === 1,
    name: row.name,
    givenName: row.given_name,
    familyName: row.family_name,
    passwordHash: row.password_hash,
    disabled: row.disabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function fromUser(user: User): UserRow {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    email_verified: user.emailVerified ? 1 : 0,
    name: user.name,
    given_name: user.givenName,
    family_name: user.familyName,
    password_hash: user.passwordHash,
    disabled: user.disabled ? 1 : 0,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}

export class KyselyStore implements Store {
  readonly dialect: 'sqlite' | 'postgres';
  readonly db: Kysely<Database>;

  readonly #group: GroupCommit | undefined;
  readonly #sqliteWrites: SqliteWrites | undefined;
  /** PostgreSQL: the hot writes, concurrent ones sharing a statement (./postgres-batches.ts). */
  readonly #batched: PostgresBatches | undefined;
  readonly #clients = new ClientCache();
  readonly #joins: Record<'sessionAndUser' | 'sessionUserAndConsent' | 'tokenFamily' | 'refreshTokenFamily' | 'accessTokenState', string>;
  /** PostgreSQL only: a refresh in one statement instead of a read and a write (Store). */
  readonly rotateValidTokenFamily?: (input: RotateValidTokenFamily) => Promise<TokenFamily | undefined>;

  /** On SQLite, `sqlite` is the node:sqlite connection under `db`'s dialect. */
  constructor(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', sqlite?: DatabaseSync) {
    this.db = db;
    this.dialect = dialect;
    if (dialect === 'sqlite' && !sqlite) throw new Error('KyselyStore: SQLite needs its node:sqlite connection');
    this.#group = sqlite ? new GroupCommit(db, sqlite) : undefined;
    this.#sqliteWrites = sqlite ? new SqliteWrites(sqlite) : undefined;
    const parameter: Placeholder = dialect === 'postgres' ? postgresParameter : sqliteParameter;
    this.#joins = {
      sessionAndUser: sessionAndUserSql(parameter, false),
      sessionUserAndConsent: sessionAndUserSql(parameter, true),
      tokenFamily: tokenFamilySql(parameter),
      refreshTokenFamily: refreshTokenFamilySql(parameter),
      accessTokenState: accessTokenStateSql(parameter),
    };
    if (dialect === 'postgres') {
      const batched = new PostgresBatches((text, parameters) => this.#rows(text, parameters));
      this.#batched = batched;
      this.rotateValidTokenFamily = (input) => batched.rotateValidTokenFamily(input);
    }
  }

  /** The rows of a statement written out by hand (./joins.ts, ./postgres-batches.ts). */
  async #rows(text: string, parameters: unknown[]): Promise<Array<Record<string, unknown>>> {
    return (await this.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, parameters))).rows;
  }

  /** The first row of a statement written out by hand. */
  async #first(text: string, parameters: unknown[]): Promise<Record<string, unknown> | undefined> {
    return (await this.#rows(text, parameters))[0];
  }

  /**
   * Every write goes through here: on SQLite into the next group commit; on PostgreSQL in a
   * transaction of its own when it has several statements, else as the single statement it is.
   */
  #write<T>(op: (db: Kysely<Database>) => Promise<T>, statements: 'one' | 'several' = 'one'): Promise<T> {
    if (this.#group) return this.#group.run(op);
    return statements === 'several' ? this.db.transaction().execute(op) : op(this.db);
  }

  async migrate(to?: string): Promise<string[]> {
    const migrator = new Migrator({
      db: this.db,
      provider: { getMigrations: async () => migrations },
      migrationTableName: 'tessera_migrations',
      migrationLockTableName: 'tessera_migrations_lock',
    });
    const { error, results } = to === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(to);
    if (error) throw error;
    const failed = results?.find((r) => r.status === 'Error');
    if (failed) throw new Error(`migration ${failed.migrationName} failed`);
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  clearCaches(): void {
    this.#clients.clear();
  }

  // clients
  async createClient(client: Client): Promise<void> {
    this.#clients.forget(client.clientId);
    await this.#write((db) => db.insertInto('clients').values(fromClient(client)).execute());
  }
  getClient(clientId: string): Promise<Client | undefined> {
    return this.#clients.get(clientId, async (id) => {
      const row = await this.db.selectFrom('clients').selectAll().where('client_id', '=', id).executeTakeFirst();
      return row ? toClient(row) : undefined;
    });
  }
  async listClients(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClient);
  }
  async deleteClient(clientId: string): Promise<boolean> {
    this.#clients.forget(clientId);
    const result = await this.#write((db) => db.deleteFrom('clients').where('client_id', '=', clientId).executeTakeFirst());
    return result.numDeletedRows === 1n;
  }
  async setClientSecretHash(clientId: string, secretHash: string): Promise<boolean> {
    this.#clients.forget(clientId);
    const result = await this.#write((db) => db.updateTable('clients').set({ secret_hash: secretHash }).where('client_id', '=', clientId).executeTakeFirst());
    return result.numUpdatedRows === 1n;
  }

  // users
  async createUser(user: User): Promise<void> {
    await this.#write((db) => db.insertInto('users').values(fromUser(user)).execute());
  }
  async getUserById(id: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }
  async getUserByUsername(username: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return row ? toUser(row) : undefined;
  }
  async listUsers(): Promise<User[]> {
    const rows = await this.db.selectFrom('users').selectAll().orderBy('username').execute();
    return rows.map(toUser);
  }
  async setUserPassword(id: string, passwordHash: string, now: number): Promise<boolean> {
    const result = await this.#write((db) => db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).executeTakeFirst());
    return result.numUpdatedRows === 1n;
  }
  async setUserDisabled(id: string, disabled: boolean, now: number): Promise<boolean> {
    const result = await this.#write((db) => db.updateTable('users').set({ disabled: disabled ? 1 : 0, updated_at: now }).where('id', '=', id).executeTakeFirst());
    return result.numUpdatedRows === 1n;
  }
  async countUsers(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // sessions
  async createSession(session: Parameters<Store['createSession']>[0]): Promise<void> {
    await this.#write((db) => db.insertInto('sessions').values(session).execute());
  }
  async getSessionAndUser(id: string, now: number, clientId?: string) {
    const withConsent = clientId !== undefined;
    return toSessionAndUser(await this.#first(withConsent ? this.#joins.sessionUserAndConsent : this.#joins.sessionAndUser, withConsent ? [id, now, clientId] : [id, now]));
  }
  async deleteSession(id: string): Promise<void> {
    await this.#write((db) => db.deleteFrom('sessions').where('id', '=', id).execute());
  }

  // consent
  async getConsentedScopes(userId: string, clientId: string): Promise<string[]> {
    const row = await this.db.selectFrom('consents').select('scope').where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return row ? row.scope.split(' ').filter((s) => s !== '') : [];
  }
  async saveConsent(userId: string, clientId: string, scopes: string[], now: number): Promise<void> {
    const scope = scopes.join(' ');
    await this.#write((db) => db
      .insertInto('consents')
      .values({ user_id: userId, client_id: clientId, scope, updated_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ scope, updated_at: now }))
      .execute());
  }

  // authorization codes: sealed; the grant issued from one, under the code's id, records its redemption
  async redeemAuthorizationCode(input: { grant: GrantRow }): Promise<boolean> {
    const { grant } = input;
    if (this.#batched) return this.#batched.redeemAuthorizationCode(grant);
    const writes = this.#sqliteWrites!;
    return this.#write(async () => writes.redeemAuthorizationCode(grant));
  }

  // grants
  async getGrant(id: string) {
    return this.db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async revokeGrant(id: string, now: number): Promise<void> {
    await this.#write(async (trx) => {
      await trx.updateTable('grants').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      await trx.updateTable('refresh_tokens').set({ consumed_at: now }).where('grant_id', '=', id).where('consumed_at', 'is', null).execute();
    }, 'several');
  }

  async listActiveGrants(userId: string, now: number) {
    return this.db
      .selectFrom('grants')
      .innerJoin('clients', 'clients.client_id', 'grants.client_id')
      .selectAll('grants')
      .select('clients.name as client_name')
      .where('grants.user_id', '=', userId)
      .where('grants.revoked_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('grants.refresh_expires_at', '>', now),
          eb.exists(
            eb.selectFrom('refresh_tokens')
              .select('refresh_tokens.token_hash')
              .whereRef('refresh_tokens.grant_id', '=', 'grants.id')
              .where('refresh_tokens.consumed_at', 'is', null)
              .where('refresh_tokens.expires_at', '>', now),
          ),
        ]),
      )
      .orderBy('grants.created_at', 'desc')
      .execute();
  }
  async withdrawClient(userId: string, clientId: string, now: number): Promise<number> {
    return this.#write(async (trx) => {
      const grants = await trx.selectFrom('grants').select('id').where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
      const ids = grants.map((g) => g.id);
      if (ids.length > 0) {
        await trx.updateTable('grants').set({ revoked_at: now }).where('id', 'in', ids).execute();
        await trx.updateTable('refresh_tokens').set({ consumed_at: now }).where('grant_id', 'in', ids).where('consumed_at', 'is', null).execute();
      }
      await trx.deleteFrom('consents').where('user_id', '=', userId).where('client_id', '=', clientId).execute();
      return ids.length;
    }, 'several');
  }

  // revoked access tokens
  async revokeAccessToken(jti: string, expiresAt: number): Promise<void> {
    await this.#write((db) => db.insertInto('revoked_access_tokens').values({ jti, expires_at: expiresAt }).onConflict((oc) => oc.column('jti').doNothing()).execute());
  }
  async getAccessTokenState(input: { userId: string; grantId: string; jti: string }) {
    return toAccessTokenState(await this.#first(this.#joins.accessTokenState, [input.userId, input.grantId, input.jti]));
  }

  // refresh tokens: the family's state is in its grant
  async getTokenFamily(grantId: string) {
    return toTokenFamily(await this.#first(this.#joins.tokenFamily, [grantId]));
  }
  async rotateTokenFamily(input: { grantId: string; generation: number; now: number; expiresAt: number }): Promise<boolean> {
    if (this.dialect === 'postgres') {
      const result = await this.db.updateTable('grants')
        .set({ refresh_generation: input.generation + 1, refresh_issued_at: input.now, refresh_expires_at: input.expiresAt })
        .where('id', '=', input.grantId).where('refresh_generation', '=', input.generation).where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    }
    const writes = this.#sqliteWrites!;
    return this.#write(async () => writes.rotateTokenFamily(input));
  }

  // refresh tokens issued by an earlier release
  async getRefreshTokenFamily(tokenHash: string) {
    return toRefreshTokenFamily(await this.#first(this.#joins.refreshTokenFamily, [tokenHash]));
  }
  async rotateLegacyRefreshToken(input: { tokenHash: string; grantId: string; now: number; expiresAt: number }): Promise<number | undefined> {
    return this.#write(async (trx) => {
      const consumed = await trx.updateTable('refresh_tokens').set({ consumed_at: input.now })
        .where('token_hash', '=', input.tokenHash).where('consumed_at', 'is', null)
        .where((eb) => eb.exists(eb.selectFrom('grants').select('grants.id').whereRef('grants.id', '=', 'refresh_tokens.grant_id').where('grants.revoked_at', 'is', null)))
        .executeTakeFirst();
      if (consumed.numUpdatedRows !== 1n) return undefined;
      // Undefined only if a revocation committed in between (PostgreSQL): the token is then consumed
      // as the revocation consumes its family's tokens anyway.
      const grant = await trx.updateTable('grants')
        .set((eb) => ({ refresh_generation: sql<number>`coalesce(${eb.ref('refresh_generation')}, 0) + 1`, refresh_issued_at: input.now, refresh_expires_at: input.expiresAt }))
        .where('id', '=', input.grantId).where('revoked_at', 'is', null)
        .returning('refresh_generation').executeTakeFirst();
      return grant?.refresh_generation ?? undefined;
    }, 'several');
  }

  async purgeExpired(input: { now: number; codeTtl: number; codeGrace: number; accessTokenTtl: number }): Promise<Record<string, number>> {
    const { now } = input;
    // Records of redeemed codes from before grants took the code's id: no longer written, emptied here.
    const count = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
    const codes = await this.#write((db) => db.deleteFrom('authorization_codes').where('expires_at', '<', now - input.codeGrace).executeTakeFirst());
    const sessions = await this.#write((db) => db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst());
    const refreshTokens = await this.#write((db) => db.deleteFrom('refresh_tokens').where('expires_at', '<=', now).executeTakeFirst());
    const revoked = await this.#write((db) => db.deleteFrom('revoked_access_tokens').where('expires_at', '<=', now).executeTakeFirst());
    // A grant goes once no access token of it can still be alive: revoked, or without a live refresh
    // token, for longer than an access token lives (its last access token was issued with its
    // current refresh token, or at its creation). It is kept at least as long as its code (and the
    // grace after it) too: its row is what refuses that code a second time.
    const horizon = now - input.accessTokenTtl;
    const codeHorizon = now - input.codeTtl - input.codeGrace;
    const grants = await this.#write((db) => db
      .deleteFrom('grants')
      .where('created_at', '<', codeHorizon)
      .where((eb) =>
        eb.or([
          eb('revoked_at', '<', horizon),
          eb.and([
            eb('created_at', '<', horizon),
            eb.or([eb('refresh_issued_at', 'is', null), eb('refresh_issued_at', '<', horizon)]),
            eb.or([eb('refresh_expires_at', 'is', null), eb('refresh_expires_at', '<=', now)]),
            eb.not(eb.exists(eb.selectFrom('refresh_tokens').select('refresh_tokens.token_hash').whereRef('refresh_tokens.grant_id', '=', 'grants.id'))),
          ]),
        ]),
      )
      .executeTakeFirst());
    return {
      authorization_codes: count(codes),
      sessions: count(sessions),
      refresh_tokens: count(refreshTokens),
      revoked_access_tokens: count(revoked),
      grants: count(grants),
    };
  }

  // signing keys
  async listSigningKeys() {
    return this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
  }
  async insertSigningKey(key: Parameters<Store['insertSigningKey']>[0]): Promise<void> {
    await this.#write((db) => db.insertInto('signing_keys').values(key).execute());
  }
  async retireSigningKeys(alg: string, exceptKid: string): Promise<void> {
    await this.#write((db) => db.updateTable('signing_keys').set({ status: 'retired' }).where('alg', '=', alg).where('kid', '!=', exceptKid).where('status', '=', 'active').execute());
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
  async close(): Promise<void> {
    await this.db.destroy();
  }
}
