// The Store on SQLite: reads on the event loop's connection (./reader.ts, and Kysely for the rest),
// writes through the writer (./writer.ts), on a worker thread for the server (./writer-thread.ts).
// In WAL mode the reads never wait for the writer, and every write resolves after its commit.
import { Kysely, type NoMigrations } from 'kysely';
import type { DatabaseSync } from 'node:sqlite';
import { Repository } from '../repository.ts';
import type { Client, Rotation, RotationOutcome, Store, TokenFamily, User } from '../store.ts';
import type { Database, GrantRow, SessionRow, SigningKeyRow } from '../types.ts';
import { sqliteDialect } from './connection.ts';
import { SqliteReader } from './reader.ts';
import type { Writer } from './writer-thread.ts';

/** Whether a refresh may move the family on: the conditions of Store.rotateTokenFamily. */
function mayRotate(r: Rotation, family: TokenFamily | undefined): family is TokenFamily {
  if (!family) return false;
  const { grant, user } = family;
  const granted = grant.scope.split(' ');
  return grant.refresh_generation === r.generation && grant.client_id === r.clientId && grant.revoked_at === null
    && grant.refresh_expires_at > r.now && grant.created_at + r.absoluteTtl > r.now
    && user !== undefined && !user.disabled
    && (r.scope === null || r.scope.split(' ').every((s) => s === '' || granted.includes(s)));
}

export class SqliteStore extends Repository implements Store {
  readonly #reader: SqliteReader;
  readonly #writer: Writer;

  /** `sqlite` is the event loop's connection; it only reads. */
  constructor(sqlite: DatabaseSync, writer: Writer) {
    const refuse = () => Promise.reject(new Error('SqliteStore: writes go through the writer'));
    super(new Kysely<Database>({ dialect: sqliteDialect(sqlite) }), (n) => `?${n}`, refuse);
    this.#reader = new SqliteReader(sqlite);
    this.#writer = writer;
  }

  // The hot paths
  override async getUserById(id: string) {
    return this.#reader.user(id);
  }
  override async getConsentedScopes(userId: string, clientId: string) {
    return this.#reader.consentedScopes(userId, clientId);
  }
  override async getGrant(id: string) {
    return this.#reader.grant(id);
  }
  override async getAccessTokenState(input: { userId: string; grantId: string; jti: string }) {
    return this.#reader.accessTokenState(input.userId, input.grantId, input.jti);
  }
  override async getTokenFamily(grantId: string) {
    return this.#reader.tokenFamily(grantId);
  }
  override async getSessionAndUser(id: string, now: number, clientId?: string) {
    return this.#reader.sessionAndUser(id, now, clientId);
  }

  redeemAuthorizationCode(input: { grant: GrantRow }): Promise<boolean> {
    return this.#writer.call('redeemAuthorizationCode', input.grant);
  }

  /** The family is read here, and written only when the refresh is valid: SQLite's reads are cheap. */
  async rotateTokenFamily<T>(r: Rotation, whileCommitting: (family: TokenFamily) => Promise<T>): Promise<RotationOutcome<T>> {
    const family = this.#reader.tokenFamily(r.grantId);
    if (!mayRotate(r, family)) return { rotated: false, family };
    const expiresAt = Math.min(r.now + r.ttl, family.grant.created_at + r.absoluteTtl);
    const committing = this.#writer.call('advanceTokenFamily', { grantId: r.grantId, generation: r.generation, now: r.now, expiresAt });
    const next = { ...family.grant, refresh_generation: r.generation + 1, refresh_issued_at: r.now, refresh_expires_at: expiresAt };
    const value = whileCommitting({ grant: next, user: family.user });
    value.catch(() => {});
    // Lost to a concurrent refresh or revocation: the family as it now stands tells the caller why.
    if (!(await committing)) return { rotated: false, family: this.#reader.tokenFamily(r.grantId) };
    return { rotated: true, family: { grant: next, user: family.user }, value: await value };
  }

  // Every other write goes to the writer.
  override async createClient(client: Client) {
    this.clients.forget(client.clientId);
    return this.#writer.call('createClient', client);
  }
  override async deleteClient(clientId: string) {
    this.clients.forget(clientId);
    return this.#writer.call('deleteClient', clientId);
  }
  override async setClientSecretHash(clientId: string, secretHash: string) {
    this.clients.forget(clientId);
    return this.#writer.call('setClientSecretHash', clientId, secretHash);
  }
  override createUser(user: User) {
    return this.#writer.call('createUser', user);
  }
  override setUserPassword(id: string, passwordHash: string, now: number) {
    return this.#writer.call('setUserPassword', id, passwordHash, now);
  }
  override setUserDisabled(id: string, disabled: boolean, now: number) {
    return this.#writer.call('setUserDisabled', id, disabled, now);
  }
  override createSession(session: SessionRow) {
    return this.#writer.call('createSession', session);
  }
  override deleteSession(id: string) {
    return this.#writer.call('deleteSession', id);
  }
  override saveConsent(userId: string, clientId: string, scopes: string[], now: number) {
    return this.#writer.call('saveConsent', userId, clientId, scopes, now);
  }
  override revokeGrant(id: string, now: number) {
    return this.#writer.call('revokeGrant', id, now);
  }
  override withdrawClient(userId: string, clientId: string, now: number) {
    return this.#writer.call('withdrawClient', userId, clientId, now);
  }
  override revokeAccessToken(jti: string, expiresAt: number) {
    return this.#writer.call('revokeAccessToken', jti, expiresAt);
  }
  override insertSigningKey(key: SigningKeyRow) {
    return this.#writer.call('insertSigningKey', key);
  }
  override retireSigningKeys(alg: string, exceptKid: string) {
    return this.#writer.call('retireSigningKeys', alg, exceptKid);
  }
  override purgeExpired(input: Parameters<Store['purgeExpired']>[0]) {
    return this.#writer.call('purgeExpired', input);
  }
  override migrate(to?: string | NoMigrations) {
    return this.#writer.call('migrate', to);
  }

  override async close(): Promise<void> {
    await this.#writer.close();
    await super.close();
  }
}
