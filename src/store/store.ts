// What the domain code asks of the database: one narrow interface per consumer, and `Store`, all of
// them. SQLite (./sqlite/store.ts) and PostgreSQL (./postgres/store.ts) implement every method alike;
// they differ inside, never in what they answer. The contract tests in test/store run against both.
import type { NoMigrations } from 'kysely';
import type { SecurityEvent } from '../events/index.ts';
import type { ThrottleState } from '../oauth/throttle.ts';
import type { EventFilter } from './events.ts';
import type { GrantRow, SessionRow, SigningKeyRow } from './types.ts';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookRow } from './types.ts';

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface Client {
  clientId: string;
  /** SHA-256 hex of the secret; null for public clients. */
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** Scopes this client may request. */
  scopes: string[];
  grantTypes: string[];
  /** Origins besides a public client's redirect URIs' that may call the token endpoints from a browser. */
  allowedOrigins: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** First-party clients skip the consent page. */
  firstParty: boolean;
  idTokenSignedResponseAlg: string | null;
  createdAt: number;
  /**
   * Who vouches for it: the operator (`tessera clients create`), nobody but itself (RFC 7591
   * registration), or the document its https client_id names (a Client ID Metadata Document, never stored).
   */
  registeredVia: 'operator' | 'dynamic' | 'document';
  /** The user who registered it with their access token; null otherwise. */
  ownerId: string | null;
  /** SHA-256 hex of the registration access token (RFC 7592); null when it was not registered so. */
  registrationTokenHash: string | null;
  /** Descriptive metadata (RFC 7591 §2), shown and returned as given, never trusted. */
  metadata: ClientDescription;
  /** The secret before a rotation with a grace period, accepted until `expiresAt` (epoch seconds). */
  previousSecret: { hash: string; expiresAt: number } | null;
}

export interface ClientDescription {
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}

/** An API registered by the operator (RFC 8707): tokens for it carry `aud` = uri and only the scopes it accepts. */
export interface Resource {
  uri: string;
  name: string;
  scopes: string[];
  createdAt: number;
}

export interface User {
  id: string;
  username: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  passwordHash: string | null;
  disabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface SessionAndUser {
  session: SessionRow;
  user: User | undefined;
  /** The scopes consented to for the client asked about; undefined when none was asked about. */
  consentedScopes?: string[];
}

/** A grant, which holds its refresh tokens' state (src/tokens/refresh.ts), and its user. */
export interface TokenFamily {
  grant: GrantRow;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

export interface AccessTokenState {
  /** Undefined when the user has been deleted. */
  user: User | undefined;
  /** Undefined once housekeeping has removed the grant. */
  grant: Pick<GrantRow, 'id' | 'revoked_at'> | undefined;
  /** Whether the token itself was revoked (RFC 7009). */
  revoked: boolean;
}

/** A refresh: the token presented (its grant and generation) and what the next token may be. */
export interface Rotation {
  grantId: string;
  generation: number;
  clientId: string;
  /** The scopes asked for (RFC 6749 §6), space-separated; null to keep the grant's. */
  scope: string | null;
  /** The resource asked for (RFC 8707), which must be the grant's if it has one; null for any. */
  resource: string | null;
  now: number;
  /** The next token's lifetime; it never outlives the family's `absoluteTtl` from the grant. */
  ttl: number;
  absoluteTtl: number;
}

export type RotationOutcome<T> =
  | { rotated: true; family: TokenFamily; value: T }
  /** Nothing written; the family as it stands (undefined when unknown), which tells why. */
  | { rotated: false; family: TokenFamily | undefined };

export interface ClientStore {
  createClient(client: Client, event?: SecurityEvent): Promise<void>;
  getClient(clientId: string): Promise<Client | undefined>;
  listClients(): Promise<Client[]>;
  /** Deletes the client, revokes its grants and forgets consent to it; false when no such client exists. */
  deleteClient(clientId: string, event?: SecurityEvent): Promise<boolean>;
  /**
   * A new secret; `previous` (the old one's hash) is still accepted until its expiry (a rotation's
   * grace period), or null for none. Returns false when no such client exists.
   */
  setClientSecretHash(
    clientId: string,
    secretHash: string,
    event?: SecurityEvent,
    previous?: { hash: string; expiresAt: number } | null,
  ): Promise<boolean>;
  /** Replaces what a client may change: everything but its id, secret, owner and creation time. */
  updateClient(client: Client, event?: SecurityEvent): Promise<boolean>;
  /** The clients a user registered (RFC 7591), oldest first. */
  listClientsOwnedBy(userId: string): Promise<Client[]>;
}

/** The APIs access tokens may be asked for (RFC 8707 `resource`). */
export interface ResourceStore {
  createResource(resource: Resource, event?: SecurityEvent): Promise<void>;
  /** Cached for a few seconds, as clients are. */
  getResource(uri: string): Promise<Resource | undefined>;
  listResources(): Promise<Resource[]>;
  deleteResource(uri: string, event?: SecurityEvent): Promise<boolean>;
  /** Replaces its name and scopes; false when there is none. */
  updateResource(resource: Resource, event?: SecurityEvent): Promise<boolean>;
}

export interface UserStore {
  createUser(user: User, event?: SecurityEvent): Promise<void>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByUsername(username: string): Promise<User | undefined>;
  listUsers(): Promise<User[]>;
  /** Ends every session of the user too; returns false when no such user exists. */
  setUserPassword(id: string, passwordHash: string, now: number, event?: SecurityEvent): Promise<boolean>;
  /** Disabling ends every session of the user too; returns false when no such user exists. */
  setUserDisabled(id: string, disabled: boolean, now: number, event?: SecurityEvent): Promise<boolean>;
  /** Deletes the user, ends their sessions, revokes their grants and forgets their consents; false when none. */
  deleteUser(id: string, now: number, event?: SecurityEvent): Promise<boolean>;
  /** A new password, and every session of the user but `keepSession` ended, in one transaction. */
  changePassword(
    input: { userId: string; passwordHash: string; now: number; keepSession: string },
    event: SecurityEvent,
  ): Promise<void>;
  countUsers(): Promise<number>;
}

/** Browser sessions (id = SHA-256 of the cookie value) and the consent remembered per user and client. */
export interface SessionStore {
  createSession(session: SessionRow, event?: SecurityEvent): Promise<void>;
  /**
   * The live session with its user (undefined when the user no longer exists), read together; with
   * `clientId`, also the scopes the user has consented to for that client.
   */
  getSessionAndUser(id: string, now: number, clientId?: string): Promise<SessionAndUser | undefined>;
  deleteSession(id: string, event?: SecurityEvent): Promise<void>;
  getConsentedScopes(userId: string, clientId: string): Promise<string[]>;
  /** Replaces the remembered scopes with `scopes` (callers pass the union). */
  saveConsent(userId: string, clientId: string, scopes: string[], now: number, event?: SecurityEvent): Promise<void>;
}

/** Grants: the token families issued from authorization codes. */
export interface GrantStore {
  /**
   * Codes are sealed (src/oauth/codes.ts) and the grant issued from one takes the code's id, so the
   * grant's row is the record of the redemption. Inserts the grant with a conditional write, only
   * if no grant has its id and its user exists and is not disabled. Returns false, having written
   * nothing, when the code was redeemed before (or by a concurrent request) or the user is not active.
   */
  redeemAuthorizationCode(input: { grant: GrantRow }): Promise<boolean>;
  getGrant(id: string): Promise<GrantRow | undefined>;
  /** Marks the grant revoked, which ends its refresh tokens and access tokens. Idempotent. */
  revokeGrant(id: string, now: number, event?: SecurityEvent): Promise<void>;
  /** The user's live grants (not revoked, refresh token unexpired), newest first; no name for a client not stored. */
  listActiveGrants(userId: string, now: number): Promise<Array<GrantRow & { client_name: string | null }>>;
  /** Revokes every grant of the user for the client and forgets the consent; returns how many grants. */
  withdrawClient(userId: string, clientId: string, now: number, event?: SecurityEvent): Promise<number>;
  /** The grant and its user, read together. */
  getTokenFamily(grantId: string): Promise<TokenFamily | undefined>;
  /**
   * A refresh, as one conditional write: moves the family to the next generation, issued `now`, only
   * if it is at the generation presented, issued to the client, not revoked, its current token and
   * the family unexpired, the scope asked for within the grant's, the resource asked for the grant's
   * (when both name one), and its user active; under
   * concurrent refreshes exactly one wins. `whileCommitting` (signing the new tokens) runs once the
   * rotation is known valid and may overlap its commit; its value is returned only after the commit.
   */
  rotateTokenFamily<T>(
    rotation: Rotation,
    whileCommitting: (family: TokenFamily) => Promise<T>,
  ): Promise<RotationOutcome<T>>;
}

/** Access tokens revoked before they expire (RFC 7009), and what decides whether one is active. */
export interface RevocationStore {
  /** Kept until the token would have expired. */
  revokeAccessToken(jti: string, expiresAt: number, event?: SecurityEvent): Promise<void>;
  /** An access token's user, grant, and whether it was revoked by itself: one read. */
  getAccessTokenState(input: { userId: string; grantId: string; jti: string }): Promise<AccessTokenState>;
}

export interface SigningKeyStore {
  listSigningKeys(): Promise<SigningKeyRow[]>;
  /**
   * Inserts the key unless another key succeeds the same one already (a concurrent rotation won):
   * whether it was inserted. The event is written only with the key.
   */
  insertSigningKey(key: SigningKeyRow, event?: SecurityEvent): Promise<boolean>;
  /** Moves a key's activation (an emergency rotation activates a pending key at once). */
  activateSigningKey(kid: string, at: number, event?: SecurityEvent): Promise<boolean>;
  deleteSigningKeys(kids: string[]): Promise<number>;
}

/**
 * The audit trail (src/events). The write methods above take the event that records their change,
 * written in the same transaction; this records the events that change nothing else.
 */
export interface EventStore {
  recordEvent(event: SecurityEvent): Promise<void>;
  /** Newest first. */
  listEvents(filter: EventFilter): Promise<SecurityEvent[]>;
}

/** Counters of failed sign-ins and client authentications, shared by every instance (src/oauth/throttle.ts). */
export interface ThrottleStore {
  getThrottles(keys: string[]): Promise<ThrottleState[]>;
  /**
   * Counts a failure for each key, starting again from one when its last failure is older than
   * `window` seconds: the keys' new states. One write for all of them.
   */
  recordFailures(input: {
    keys: Array<{ key: string; subject: string }>;
    now: number;
    window: number;
  }): Promise<ThrottleState[]>;
  /** Forgets the keys' failures (after a success). */
  clearThrottles(keys: string[]): Promise<void>;
  /** Forgets every key of a username or client (`tessera users unlock`): how many there were. */
  clearThrottlesOf(subject: string, event?: SecurityEvent): Promise<number>;
}

/** Webhook subscriptions, their outbox of deliveries and the log of attempts (src/events/webhooks). */
export interface WebhookStore {
  createWebhook(webhook: WebhookRow, event?: SecurityEvent): Promise<void>;
  getWebhook(id: string): Promise<WebhookRow | undefined>;
  /** Every webhook (`undefined`), the operator's (`null`), or a user's. */
  listWebhooks(ownerId?: string | null): Promise<WebhookRow[]>;
  /** Replaces its URL and event types; false when there is none. */
  updateWebhook(id: string, changes: { url: string; events: string }, event?: SecurityEvent): Promise<boolean>;
  /** Deletes the webhook and its deliveries not yet made; false when there was none. */
  deleteWebhook(id: string, event?: SecurityEvent): Promise<boolean>;
  /** A new secret; the one before keeps signing alongside until `previousUntil`. */
  rotateWebhookSecret(
    id: string,
    secrets: { secretEnc: string; previousSecretEnc: string; previousUntil: number },
  ): Promise<boolean>;
  /** A delivery of its own (`tessera webhooks test`), outside the events. */
  enqueueDelivery(delivery: WebhookDeliveryRow): Promise<void>;
  /**
   * Takes up to `limit` deliveries due at `now` for `lease` seconds: no other instance takes them
   * meanwhile (on PostgreSQL, FOR UPDATE SKIP LOCKED), and if this one dies they are due again after.
   */
  claimDeliveries(now: number, lease: number, limit: number): Promise<WebhookDeliveryRow[]>;
  /** Logs an attempt and moves the delivery on: delivered, due again at `nextAttemptAt`, or failed. */
  recordAttempt(
    attempt: WebhookAttemptRow,
    outcome: { status: 'delivered' | 'failed' } | { status: 'pending'; nextAttemptAt: number },
  ): Promise<void>;
  getDelivery(id: string): Promise<WebhookDeliveryRow | undefined>;
  /** A webhook's deliveries, newest first. */
  listDeliveries(webhookId: string, limit: number): Promise<WebhookDeliveryRow[]>;
  listAttempts(deliveryId: string): Promise<WebhookAttemptRow[]>;
  /** Makes a delivery due again now, with a fresh count of attempts; false when there is none. */
  redeliver(id: string, now: number): Promise<boolean>;
}

export interface PurgeInput {
  now: number;
  codeTtl: number;
  /** How long after a code expires its grant is kept, so that its replay is still recognised as one. */
  codeGrace: number;
  accessTokenTtl: number;
  /** Seconds events are kept (TESSERA_EVENT_RETENTION). */
  eventRetention: number;
  /** Seconds after which a throttle's failures no longer count (its window, or its lock if longer). */
  throttleHorizon: number;
}

export interface DatabaseStats {
  /** Connections open (PostgreSQL's pool; SQLite's reader and writer). */
  open: number;
  /** Connections running a statement (on SQLite: the writer, while writes are queued). */
  inUse: number;
  /** Callers waiting for a connection (on SQLite: writes queued for the writer). */
  waiting: number;
  /** Database faults since start (./faults.ts): lost connections, an unreachable server, a full disk. */
  faults: number;
}

export interface Store
  extends
    ClientStore,
    ResourceStore,
    UserStore,
    SessionStore,
    GrantStore,
    RevocationStore,
    SigningKeyStore,
    EventStore,
    ThrottleStore,
    WebhookStore {
  /** Deletes what can no longer be used (housekeeping); returns the rows deleted per table. */
  purgeExpired(input: PurgeInput): Promise<Record<string, number>>;
  /** Runs pending migrations (./migrations), or migrates up or down to `to`; returns the names applied or undone. */
  migrate(to?: string | NoMigrations): Promise<string[]>;
  /** Lets `resolver` answer getClient for https client ids (Client ID Metadata Documents). */
  resolveClientUrlsWith(resolver: ((clientId: string) => Promise<Client>) | undefined): void;
  /** Forgets cached data (clients), after changes made behind this store's back. */
  clearCaches(): void;
  /** Readiness probe: a trivial query. */
  ping(): Promise<void>;
  /** The connections and faults, for the metrics. */
  stats(): DatabaseStats;
  close(): Promise<void>;
}
