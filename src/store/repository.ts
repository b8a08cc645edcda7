// The store's code shared by SQLite and PostgreSQL, over Kysely: every read and write but the two
// hot writes (a code's redemption and a refresh), which each database does its own way
// (./sqlite/store.ts, ./postgres/store.ts). Writes are built here and run by the database's store:
// on SQLite by the writer's group commit, on PostgreSQL as one statement or in a transaction.
import { CompiledQuery, sql } from 'kysely';
import type { Compilable, ExpressionBuilder, Kysely, NoMigrations, OnConflictBuilder, QueryResult } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import { ClientCache } from './client-cache.ts';
import { type EventFilter, insertEvents, insertEventsIf, listEvents } from './events.ts';
import { countFailures, toThrottleState } from './throttles.ts';
import { migrate } from './migrations/index.ts';
import { fromClient, fromUser, type Placeholder, sharedStatements, splitScope, toAccessTokenState } from './rows.ts';
import { fromResource, toClient, toResource, toSessionAndUser, toTokenFamily, toUser } from './rows.ts';
import type { ThrottleState } from '../oauth/throttle.ts';
import type { Client, PurgeInput, Resource, User } from './store.ts';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from './types.ts';
import type { ClientRow, Database, GrantRow, SessionRow, SigningKeyRow, ThrottleRow, UserRow } from './types.ts';

type Db = Kysely<Database>;
type Where<Table extends keyof Database> = ExpressionBuilder<Database, Table>;
/** Runs a write's statements, all or none; resolves once they are committed. */
export type Writes = (
  statements: CompiledQuery[],
) => Promise<Array<Pick<QueryResult<unknown>, 'numAffectedRows' | 'rows'>>>;

export class Repository {
  readonly db: Db;
  readonly #writes: Writes;
  #documents: ((clientId: string) => Promise<Client>) | undefined;
  protected readonly clients = new ClientCache<Client>();
  protected readonly resources = new ClientCache<Resource>();
  protected readonly statements: ReturnType<typeof sharedStatements>;

  constructor(db: Db, placeholder: Placeholder, writes: Writes) {
    this.db = db;
    this.#writes = writes;
    this.statements = sharedStatements(placeholder);
  }

  /** A write of one or more statements (built with `this.db`), all or none: the rows the first changed. */
  protected async write(...queries: Compilable[]): Promise<number> {
    const [first] = await this.#writes(queries.map((query) => query.compile()));
    return Number(first?.numAffectedRows ?? 0);
  }

  /** A write of statements that return rows (RETURNING), all or none: the rows of every statement. */
  protected async writeRows<T>(...queries: Compilable[]): Promise<T[]> {
    const results = await this.#writes(queries.map((query) => query.compile()));
    return results.flatMap((result) => result.rows as T[]);
  }

  /** The rows of a statement written out by hand (./rows.ts); SQLite runs them prepared once. */
  protected async rows<T = Record<string, unknown>>(text: string, parameters: unknown[]): Promise<T[]> {
    return (await this.db.executeQuery<T>(CompiledQuery.raw(text, parameters))).rows;
  }

  migrate(to?: string | NoMigrations): Promise<string[]> {
    return migrate(this.db, to);
  }

  clearCaches(): void {
    this.clients.clear();
    this.resources.clear();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // clients
  async createClient(client: Client, event?: SecurityEvent): Promise<void> {
    this.clients.forget(client.clientId);
    await this.write(this.db.insertInto('clients').values(fromClient(client)), ...this.#events(event));
  }
  /**
   * Resolves the client ids that are https URLs (Client ID Metadata Documents,
   * src/oauth/registration/documents.ts); without it they are looked up like any other id.
   */
  resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined): void {
    this.#documents = resolver;
  }
  getClient(clientId: string): Promise<Client | undefined> {
    // Tessera's own ids never start with https:// (../tokens/opaque.ts newId).
    if (this.#documents && clientId.startsWith('https://')) return this.#documents(clientId);
    return this.clients.get(clientId, async (id) => {
      const row = await this.db.selectFrom('clients').selectAll().where('client_id', '=', id).executeTakeFirst();
      return row && toClient(row);
    });
  }
  async listClients(): Promise<Client[]> {
    const rows = await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClient);
  }
  async deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean> {
    this.clients.forget(clientId);
    const now = event?.at ?? Math.floor(Date.now() / 1000);
    const deleted = this.db.deleteFrom('clients').where('client_id', '=', clientId);
    // Its tokens end with it: the access tokens too, which are checked against their grant.
    const live = (eb: Where<'grants'>) => eb.and({ client_id: clientId, revoked_at: null });
    const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
    const consents = this.db.deleteFrom('consents').where('client_id', '=', clientId);
    return (await this.write(deleted, revoked, consents, ...this.#events(event))) === 1;
  }
  async setClientSecretHash(
    clientId: string,
    secretHash: string,
    event?: SecurityEvent,
    previous: { hash: string; expiresAt: number } | null = null,
  ): Promise<boolean> {
    this.clients.forget(clientId);
    const set = {
      secret_hash: secretHash,
      previous_secret_hash: previous?.hash ?? null,
      previous_secret_expires_at: previous?.expiresAt ?? null,
    };
    const updated = this.db.updateTable('clients').set(set).where('client_id', '=', clientId);
    return (await this.write(updated, ...this.#events(event))) === 1;
  }

  async updateClient(client: Client, event?: SecurityEvent): Promise<boolean> {
    this.clients.forget(client.clientId);
    // Its id, owner, origin and creation time stay.
    const kept = ['client_id', 'owner_id', 'created_at', 'registered_via'];
    const set: Partial<ClientRow> = Object.fromEntries(
      Object.entries(fromClient(client)).filter(([column]) => !kept.includes(column)),
    );
    const updated = this.db.updateTable('clients').set(set).where('client_id', '=', client.clientId);
    return (await this.write(updated, ...this.#events(event))) === 1;
  }
  async listClientsOwnedBy(userId: string): Promise<Client[]> {
    const owned = this.db.selectFrom('clients').selectAll().where('owner_id', '=', userId);
    return (await owned.orderBy('created_at').orderBy('client_id').execute()).map(toClient);
  }

  // APIs (RFC 8707)
  async createResource(resource: Resource, event?: SecurityEvent): Promise<void> {
    this.resources.forget(resource.uri);
    await this.write(this.db.insertInto('resources').values(fromResource(resource)), ...this.#events(event));
  }
  getResource(uri: string): Promise<Resource | undefined> {
    return this.resources.get(uri, async (id) => {
      const row = await this.db.selectFrom('resources').selectAll().where('uri', '=', id).executeTakeFirst();
      return row && toResource(row);
    });
  }
  async listResources(): Promise<Resource[]> {
    return (await this.db.selectFrom('resources').selectAll().orderBy('uri').execute()).map(toResource);
  }
  async updateResource(resource: Resource, event?: SecurityEvent): Promise<boolean> {
    this.resources.forget(resource.uri);
    const set = { name: resource.name, scope: resource.scopes.join(' ') };
    const updated = this.db.updateTable('resources').set(set).where('uri', '=', resource.uri);
    return (await this.write(updated, ...this.#events(event))) === 1;
  }
  async deleteResource(uri: string, event?: SecurityEvent): Promise<boolean> {
    this.resources.forget(uri);
    const deleted = this.db.deleteFrom('resources').where('uri', '=', uri);
    return (await this.write(deleted, ...this.#events(event))) === 1;
  }

  // users
  async createUser(user: User, event?: SecurityEvent): Promise<void> {
    await this.write(this.db.insertInto('users').values(fromUser(user)), ...this.#events(event));
  }
  async getUserById(id: string): Promise<User | undefined> {
    const [row] = await this.rows<UserRow>(this.statements.user, [id]);
    return row && toUser(row);
  }
  async getUserByUsername(username: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return row && toUser(row);
  }
  async listUsers(): Promise<User[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('username').execute()).map(toUser);
  }
  async setUserPassword(id: string, passwordHash: string, now: number, event?: SecurityEvent): Promise<boolean> {
    const set = { password_hash: passwordHash, updated_at: now };
    const updated = this.db.updateTable('users').set(set).where('id', '=', id);
    // Whoever signed in with the old password is signed out; grants (refresh tokens) stay.
    const sessions = this.db.deleteFrom('sessions').where('user_id', '=', id);
    return (await this.write(updated, sessions, ...this.#events(event))) === 1;
  }
  async setUserDisabled(id: string, disabled: boolean, now: number, event?: SecurityEvent): Promise<boolean> {
    const set = { disabled: disabled ? 1 : 0, updated_at: now };
    const updated = this.db.updateTable('users').set(set).where('id', '=', id);
    // Disabling signs the user out everywhere; their grants are refused while disabled, not revoked.
    const sessions = disabled ? [this.db.deleteFrom('sessions').where('user_id', '=', id)] : [];
    return (await this.write(updated, ...sessions, ...this.#events(event))) === 1;
  }
  async deleteUser(id: string, now: number, event?: SecurityEvent): Promise<boolean> {
    const live = (eb: Where<'grants'>) => eb.and({ user_id: id, revoked_at: null });
    return (
      (await this.write(
        this.db.deleteFrom('users').where('id', '=', id),
        this.db.deleteFrom('sessions').where('user_id', '=', id),
        this.db.deleteFrom('consents').where('user_id', '=', id),
        this.db.updateTable('grants').set({ revoked_at: now }).where(live),
        ...this.#events(event),
      )) === 1
    );
  }
  async changePassword(
    input: { userId: string; passwordHash: string; now: number; keepSession: string },
    event: SecurityEvent,
  ): Promise<void> {
    const set = { password_hash: input.passwordHash, updated_at: input.now };
    const others = (eb: Where<'sessions'>) =>
      eb.and([eb('user_id', '=', input.userId), eb('id', '!=', input.keepSession)]);
    await this.write(
      this.db.updateTable('users').set(set).where('id', '=', input.userId),
      this.db.deleteFrom('sessions').where(others),
      ...this.#events(event),
    );
  }
  async countUsers(): Promise<number> {
    const count = (eb: { fn: Db['fn'] }) => eb.fn.countAll<number | string>().as('n');
    return Number((await this.db.selectFrom('users').select(count).executeTakeFirstOrThrow()).n);
  }

  // sessions and consent
  async createSession(session: SessionRow, event?: SecurityEvent): Promise<void> {
    await this.write(this.db.insertInto('sessions').values(session), ...this.#events(event));
  }
  async getSessionAndUser(id: string, now: number, clientId?: string) {
    if (clientId === undefined)
      return toSessionAndUser((await this.rows(this.statements.sessionAndUser, [id, now]))[0]);
    return toSessionAndUser((await this.rows(this.statements.sessionUserAndConsent, [id, now, clientId]))[0]);
  }
  async deleteSession(id: string, event?: SecurityEvent): Promise<void> {
    await this.write(this.db.deleteFrom('sessions').where('id', '=', id), ...this.#events(event));
  }
  async getConsentedScopes(userId: string, clientId: string): Promise<string[]> {
    const [row] = await this.rows<{ scope: string }>(this.statements.consent, [userId, clientId]);
    return splitScope(row?.scope);
  }
  async saveConsent(
    userId: string,
    clientId: string,
    scopes: string[],
    now: number,
    event?: SecurityEvent,
  ): Promise<void> {
    const values = { user_id: userId, client_id: clientId, scope: scopes.join(' '), updated_at: now };
    const replace = (c: OnConflictBuilder<Database, 'consents'>) =>
      c.columns(['user_id', 'client_id']).doUpdateSet(values);
    await this.write(this.db.insertInto('consents').values(values).onConflict(replace), ...this.#events(event));
  }

  // grants
  async getGrant(id: string): Promise<GrantRow | undefined> {
    return (await this.rows<GrantRow>(this.statements.grant, [id]))[0];
  }
  async getTokenFamily(grantId: string) {
    return toTokenFamily((await this.rows(this.statements.tokenFamily, [grantId]))[0]);
  }
  async revokeGrant(id: string, now: number, event?: SecurityEvent): Promise<void> {
    const live = (eb: Where<'grants'>) => eb.and({ id, revoked_at: null });
    await this.write(this.db.updateTable('grants').set({ revoked_at: now }).where(live), ...this.#events(event));
  }
  async listActiveGrants(userId: string, now: number) {
    return this.db
      .selectFrom('grants')
      .leftJoin('clients', 'clients.client_id', 'grants.client_id')
      .selectAll('grants')
      .select('clients.name as client_name')
      .where((eb) => eb.and([eb('grants.user_id', '=', userId), eb('grants.revoked_at', 'is', null)]))
      .where('grants.refresh_expires_at', '>', now)
      .orderBy('grants.created_at', 'desc')
      .execute();
  }
  async withdrawClient(userId: string, clientId: string, now: number, event?: SecurityEvent): Promise<number> {
    const live = (eb: Where<'grants'>) => eb.and({ user_id: userId, client_id: clientId, revoked_at: null });
    const consent = (eb: Where<'consents'>) => eb.and({ user_id: userId, client_id: clientId });
    const revoked = this.db.updateTable('grants').set({ revoked_at: now }).where(live);
    return this.write(revoked, this.db.deleteFrom('consents').where(consent), ...this.#events(event));
  }

  // access tokens
  async revokeAccessToken(jti: string, expiresAt: number, event?: SecurityEvent): Promise<void> {
    const once = (c: OnConflictBuilder<Database, 'revoked_access_tokens'>) => c.doNothing();
    const revoked = this.db.insertInto('revoked_access_tokens').values({ jti, expires_at: expiresAt }).onConflict(once);
    await this.write(revoked, ...this.#events(event));
  }
  async getAccessTokenState(input: { userId: string; grantId: string; jti: string }) {
    const [row] = await this.rows(this.statements.accessTokenState, [input.userId, input.grantId, input.jti]);
    return toAccessTokenState(row);
  }

  /**
   * Housekeeping. A grant goes once no access token of it can still be alive: revoked, or without a
   * live refresh token, for longer than an access token lives (its last access token was issued with
   * its current refresh token). It is kept at least as long as its code (and the grace after it)
   * too: its row is what refuses that code a second time.
   */
  async purgeExpired(input: PurgeInput): Promise<Record<string, number>> {
    const { now } = input;
    const horizon = now - input.accessTokenTtl;
    const sessions = await this.write(this.db.deleteFrom('sessions').where('expires_at', '<=', now));
    const revoked = await this.write(this.db.deleteFrom('revoked_access_tokens').where('expires_at', '<=', now));
    const gone = (eb: Where<'grants'>) =>
      eb.and([
        eb('created_at', '<', now - input.codeTtl - input.codeGrace),
        eb.or([
          eb('revoked_at', '<', horizon),
          eb.and([
            eb('created_at', '<', horizon),
            eb('refresh_issued_at', '<', horizon),
            eb('refresh_expires_at', '<=', now),
          ]),
        ]),
      ]);
    const grants = await this.write(this.db.deleteFrom('grants').where(gone));
    const events = await this.write(this.db.deleteFrom('events').where('at', '<', now - input.eventRetention));
    const stale = this.db.deleteFrom('throttles').where('last_failure_at', '<', now - input.throttleHorizon);
    const throttles = await this.write(stale);
    // Webhook deliveries made or given up, kept as long as events, with their attempts.
    const done = (eb: Where<'webhook_deliveries'>) =>
      eb.and([eb('status', '!=', 'pending'), eb('created_at', '<', now - input.eventRetention)]);
    const oldDeliveries = this.db.selectFrom('webhook_deliveries').select('id').where(done);
    await this.write(this.db.deleteFrom('webhook_attempts').where('delivery_id', 'in', oldDeliveries));
    const deliveries = await this.write(this.db.deleteFrom('webhook_deliveries').where(done));
    return { sessions, revoked_access_tokens: revoked, grants, events, throttles, webhook_deliveries: deliveries };
  }

  // throttling (src/oauth/throttle.ts)
  async getThrottles(keys: string[]): Promise<ThrottleState[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.selectFrom('throttles').selectAll().where('key', 'in', keys).execute();
    return rows.map(toThrottleState);
  }
  async recordFailures(input: { keys: Array<{ key: string; subject: string }>; now: number; window: number }) {
    return (await this.writeRows<ThrottleRow>(...countFailures(this.db, input))).map(toThrottleState);
  }
  async clearThrottles(keys: string[]): Promise<void> {
    if (keys.length > 0) await this.write(this.db.deleteFrom('throttles').where('key', 'in', keys));
  }
  async clearThrottlesOf(subject: string, event?: SecurityEvent): Promise<number> {
    return this.write(this.db.deleteFrom('throttles').where('subject', '=', subject), ...this.#events(event));
  }

  // the audit trail (src/events)
  #events(event: SecurityEvent | undefined) {
    return insertEvents(this.db, [event]);
  }
  /** An event that records no change of its own (a failed sign-in, a throttled one). */
  async recordEvent(event: SecurityEvent): Promise<void> {
    await this.write(...insertEvents(this.db, [event]));
  }
  listEvents(filter: EventFilter): Promise<SecurityEvent[]> {
    return listEvents(this.db, filter);
  }

  // webhooks (src/events/webhooks)
  async createWebhook(webhook: WebhookRow, event?: SecurityEvent): Promise<void> {
    await this.write(this.db.insertInto('webhooks').values(webhook), ...this.#events(event));
  }
  async getWebhook(id: string): Promise<WebhookRow | undefined> {
    return this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async listWebhooks(ownerId?: string | null): Promise<WebhookRow[]> {
    let query = this.db.selectFrom('webhooks').selectAll();
    if (ownerId === null) query = query.where('owner_id', 'is', null);
    else if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
    return query.orderBy('created_at').orderBy('id').execute();
  }
  async updateWebhook(id: string, changes: { url: string; events: string }, event?: SecurityEvent): Promise<boolean> {
    const updated = this.db.updateTable('webhooks').set(changes).where('id', '=', id);
    return (await this.write(updated, ...this.#events(event))) === 1;
  }
  async deleteWebhook(id: string, event?: SecurityEvent): Promise<boolean> {
    const pending = (eb: Where<'webhook_deliveries'>) => eb.and({ webhook_id: id, status: 'pending' });
    const deleted = this.db.deleteFrom('webhooks').where('id', '=', id);
    const undelivered = this.db.deleteFrom('webhook_deliveries').where(pending);
    return (await this.write(deleted, undelivered, ...this.#events(event))) === 1;
  }
  async rotateWebhookSecret(
    id: string,
    secrets: { secretEnc: string; previousSecretEnc: string; previousUntil: number },
  ): Promise<boolean> {
    const set = {
      secret_enc: secrets.secretEnc,
      previous_secret_enc: secrets.previousSecretEnc,
      previous_until: secrets.previousUntil,
    };
    return (await this.write(this.db.updateTable('webhooks').set(set).where('id', '=', id))) === 1;
  }
  async enqueueDelivery(delivery: WebhookDeliveryRow): Promise<void> {
    await this.write(this.db.insertInto('webhook_deliveries').values(delivery));
  }
  /** The deliveries due, as a subquery; PostgreSQL locks them (FOR UPDATE SKIP LOCKED). */
  protected dueDeliveries(now: number, limit: number) {
    return this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .limit(limit);
  }
  async claimDeliveries(now: number, lease: number, limit: number): Promise<WebhookDeliveryRow[]> {
    const claimed = this.db
      .updateTable('webhook_deliveries')
      .set({ locked_until: now + lease })
      .where('id', 'in', this.dueDeliveries(now, limit))
      .returningAll();
    return this.writeRows<WebhookDeliveryRow>(claimed);
  }
  async recordAttempt(
    attempt: WebhookAttemptRow,
    outcome: { status: 'delivered' | 'failed' } | { status: 'pending'; nextAttemptAt: number },
  ): Promise<void> {
    const finished = outcome.status === 'pending' ? null : attempt.at;
    const set = {
      status: outcome.status,
      attempts: attempt.attempt,
      next_attempt_at: outcome.status === 'pending' ? outcome.nextAttemptAt : attempt.at,
      locked_until: null,
      last_status: attempt.status,
      last_error: attempt.error,
      finished_at: finished,
    };
    const once = (c: OnConflictBuilder<Database, 'webhook_attempts'>) => c.doNothing();
    await this.write(
      this.db.updateTable('webhook_deliveries').set(set).where('id', '=', attempt.delivery_id),
      this.db.insertInto('webhook_attempts').values(attempt).onConflict(once),
    );
  }
  async getDelivery(id: string): Promise<WebhookDeliveryRow | undefined> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }
  async listDeliveries(webhookId: string, limit: number): Promise<WebhookDeliveryRow[]> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
  async listAttempts(deliveryId: string): Promise<WebhookAttemptRow[]> {
    const attempts = this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId);
    return attempts.orderBy('attempt').execute();
  }
  async redeliver(id: string, now: number): Promise<boolean> {
    // The attempts logged so far stay; the retry schedule starts again from here.
    const again = this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: 'pending' as const,
        next_attempt_at: now,
        locked_until: null,
        finished_at: null,
        retry_base: eb.ref('attempts'),
      }))
      .where('id', '=', id);
    return (await this.write(again)) === 1;
  }

  // signing keys
  async listSigningKeys(): Promise<SigningKeyRow[]> {
    return this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
  }
  async insertSigningKey(key: SigningKeyRow, event?: SecurityEvent): Promise<boolean> {
    const once = (c: OnConflictBuilder<Database, 'signing_keys'>) => c.column('successor_of').doNothing();
    const inserted = this.db.insertInto('signing_keys').values(key).onConflict(once);
    return (await this.write(inserted, ...insertEventsIf(this.db, event, key.kid))) === 1;
  }
  async activateSigningKey(kid: string, at: number, event?: SecurityEvent): Promise<boolean> {
    const moved = this.db.updateTable('signing_keys').set({ activates_at: at }).where('kid', '=', kid);
    return (await this.write(moved, ...this.#events(event))) === 1;
  }
  async deleteSigningKeys(kids: string[]): Promise<number> {
    if (kids.length === 0) return 0;
    return this.write(this.db.deleteFrom('signing_keys').where('kid', 'in', kids));
  }
}
