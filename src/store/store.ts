// The repository interface the domain code depends on. One Kysely implementation (./kysely-store.ts)
// serves SQLite and PostgreSQL; the contract tests in test/store run against both.
import type {
  GrantRow,
  SessionRow,
  SigningKeyRow,
} from './types.ts';
import type { AccessTokenState, RefreshTokenFamily, SessionAndUser, TokenFamily } from './joins.ts';

export interface RotateValidTokenFamily {
  grantId: string;
  /** The generation of the token presented. */
  generation: number;
  clientId: string;
  now: number;
  ttl: number;
  absoluteTtl: number;
}

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
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** First-party clients skip the consent page. */
  firstParty: boolean;
  idTokenSignedResponseAlg: string | null;
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

/** Clients (the CLI, client authentication, the authorization endpoint). */
export interface ClientStore {
  createClient(client: Client): Promise<void>;
  getClient(clientId: string): Promise<Client | undefined>;
  listClients(): Promise<Client[]>;
  /** Returns false when no such client exists. */
  deleteClient(clientId: string): Promise<boolean>;
  /** Returns false when no such client exists. */
  setClientSecretHash(clientId: string, secretHash: string): Promise<boolean>;
}

/** Users (the CLI, sign-in). */
export interface UserStore {
  createUser(user: User): Promise<void>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByUsername(username: string): Promise<User | undefined>;
  listUsers(): Promise<User[]>;
  /** Returns false when no such user exists. */
  setUserPassword(id: string, passwordHash: string, now: number): Promise<boolean>;
  /** Returns false when no such user exists. */
  setUserDisabled(id: string, disabled: boolean, now: number): Promise<boolean>;
  countUsers(): Promise<number>;
}

/** Browser sessions (id = SHA-256 of the cookie value) and the consent remembered per user and client. */
export interface SessionStore {
  createSession(session: SessionRow): Promise<void>;
  /**
   * The live session with its user (undefined when the user no longer exists), read together; with
   * `clientId`, also the scopes the user has consented to for that client.
   */
  getSessionAndUser(id: string, now: number, clientId?: string): Promise<SessionAndUser | undefined>;
  deleteSession(id: string): Promise<void>;
  getConsentedScopes(userId: string, clientId: string): Promise<string[]>;
  /** Replaces the remembered scopes with `scopes` (callers pass the union). */
  saveConsent(userId: string, clientId: string, scopes: string[], now: number): Promise<void>;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';

  // clients
  createClient(client: Client): Promise<void>;
  getClient(clientId: string): Promise<Client | undefined>;
  listClients(): Promise<Client[]>;
  /** Returns false when no such client exists. */
  deleteClient(clientId: string): Promise<boolean>;
  /** Returns false when no such client exists. */
  setClientSecretHash(clientId: string, secretHash: string): Promise<boolean>;

  // users
  createUser(user: User): Promise<void>;
  getUserById(id: string): Promise<User | undefined>;
  getUserByUsername(username: string): Promise<User | undefined>;
  listUsers(): Promise<User[]>;
  /** Returns false when no such user exists. */
  setUserPassword(id: string, passwordHash: string, now: number): Promise<boolean>;
  /** Returns false when no such user exists. */
  setUserDisabled(id: string, disabled: boolean, now: number): Promise<boolean>;
  countUsers(): Promise<number>;

  // sessions (id = SHA-256 of the cookie value)
  createSession(session: SessionRow): Promise<void>;
  /** An unexpired session, or undefined. */
  /**
   * The live session with its user (undefined when the user no longer exists), read together; with
   * `clientId`, also the scopes the user has consented to for that client.
   */
  getSessionAndUser(id: string, now: number, clientId?: string): Promise<SessionAndUser | undefined>;
  deleteSession(id: string): Promise<void>;

  // consent, remembered per user and client
  getConsentedScopes(userId: string, clientId: string): Promise<string[]>;
  /** Replaces the remembered scopes with `scopes` (callers pass the union). */
  saveConsent(userId: string, clientId: string, scopes: string[], now: number): Promise<void>;

  // authorization codes
  /**
   * Codes are sealed (src/oauth/codes.ts) and the grant issued from one takes the code's id, so the
   * grant's row is the record of the redemption, and it holds the state of the refresh token issued
   * with it (generation 1). Inserts the grant with a conditional write (`INSERT … ON CONFLICT DO
   * NOTHING`, and only while the grant's user exists and is not disabled). Returns false when the
   * code was redeemed before, or by a concurrent request, or the user is no longer active; nothing
   * is written then.
   */
  redeemAuthorizationCode(input: { grant: GrantRow }): Promise<boolean>;

  // grants (token families)
  getGrant(id: string): Promise<GrantRow | undefined>;
  /** Marks the grant revoked and every refresh token of it consumed. Idempotent. */
  revokeGrant(id: string, now: number): Promise<void>;

  /** The user's live grants (not revoked, with a refresh token not yet expired), newest first. */
  listActiveGrants(userId: string, now: number): Promise<Array<GrantRow & { client_name: string }>>;
  /** Revokes every grant of the user for the client and forgets the consent; returns how many grants. */
  withdrawClient(userId: string, clientId: string, now: number): Promise<number>;

  // revoked access tokens (RFC 7009): kept until the token would have expired
  revokeAccessToken(jti: string, expiresAt: number): Promise<void>;
  /** An access token's user, grant, and whether it was revoked by itself: one read. */
  getAccessTokenState(input: { userId: string; grantId: string; jti: string }): Promise<AccessTokenState>;

  // refresh tokens (src/tokens/refresh.ts): the family's state is in its grant
  /** The grant and its user, read together (a refresh request needs both). */
  getTokenFamily(grantId: string): Promise<TokenFamily | undefined>;
  /**
   * Rotation, with a conditional write: moves the grant from `generation` to the next, issued `now`
   * and expiring at `expiresAt`, only while it is at `generation` and not revoked. Returns false
   * when it was not (a concurrent refresh rotated it first, or it was revoked); nothing is written then.
   */
  rotateTokenFamily(input: { grantId: string; generation: number; now: number; expiresAt: number }): Promise<boolean>;
  /**
   * Only where every statement is a round trip (PostgreSQL): the usual refresh as one statement.
   * Rotates the grant as rotateTokenFamily does, expiring at the earlier of `now + ttl` and its
   * creation + `absoluteTtl`, only if it is at `generation`, issued to `clientId`, neither revoked
   * nor older than `absoluteTtl`, its current token unexpired and its user active. Returns the grant
   * as rotated and its user; undefined, having written nothing, when any of that does not hold.
   */
  rotateValidTokenFamily?(input: RotateValidTokenFamily): Promise<TokenFamily | undefined>;

  // refresh tokens issued by an earlier release (refresh_tokens, keyed by refreshTokenKey(token))
  /** The token with its grant and its user, read together. */
  getRefreshTokenFamily(tokenHash: string): Promise<RefreshTokenFamily | undefined>;
  /**
   * The first rotation of such a token: in one transaction, marks it consumed with a conditional
   * write (`… WHERE consumed_at IS NULL`) and, only if that won, moves its family into the grant:
   * the next generation (1 for a family that had none), issued `now`, expiring at `expiresAt`.
   * Returns that generation, or undefined when the token was already rotated or the grant revoked.
   */
  rotateLegacyRefreshToken(input: { tokenHash: string; grantId: string; now: number; expiresAt: number }): Promise<number | undefined>;

  /** Deletes what can no longer be used (housekeeping); returns the rows deleted per table. */
  purgeExpired(input: { now: number; codeTtl: number; codeGrace: number; accessTokenTtl: number }): Promise<Record<string, number>>;

  // signing keys
  listSigningKeys(): Promise<SigningKeyRow[]>;
  insertSigningKey(key: SigningKeyRow): Promise<void>;
  /** Marks every active key of `alg` other than `exceptKid` retired. */
  retireSigningKeys(alg: string, exceptKid: string): Promise<void>;

  /** Forgets cached data (clients), after changes made behind this store's back. */
  clearCaches(): void;

  /**
   * Runs pending migrations (src/store/migrations), or migrates up or down to `to`; returns the
   * names applied or undone.
   */
  migrate(to?: string): Promise<string[]>;
  /** Readiness probe: a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
