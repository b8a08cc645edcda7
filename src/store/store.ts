// The repository interface the domain code depends on. One Kysely implementation (./kysely-store.ts)
// serves SQLite and PostgreSQL; the contract tests in test/store run against both.
import type {
  GrantRow,
  RefreshTokenRow,
  SessionRow,
  SigningKeyRow,
} from './types.ts';
import type { AccessTokenState, RefreshTokenFamily, SessionAndUser } from './joins.ts';

export interface RotateValidRefreshToken {
  tokenHash: string;
  clientId: string;
  now: number;
  nextTokenHash: string;
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
   * grant's row is the record of the redemption. In one transaction: insert the grant with a
   * conditional write (`INSERT … ON CONFLICT DO NOTHING`, and only while the grant's user exists and
   * is not disabled), and only if that write won, the refresh token (when given). Returns false when
   * the code was redeemed before, or by a concurrent request, or the user is no longer active;
   * nothing is written then.
   */
  redeemAuthorizationCode(input: {
    grant: GrantRow;
    refreshToken: RefreshTokenRow | null;
  }): Promise<boolean>;

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

  // refresh tokens (token_hash = refreshTokenKey(token): the token's time prefix and its SHA-256)
  /** The token with its grant and its user, read together (a refresh request needs all three). */
  getRefreshTokenFamily(tokenHash: string): Promise<RefreshTokenFamily | undefined>;
  /**
   * In one transaction: mark `tokenHash` consumed with a conditional write (`… WHERE consumed_at IS
   * NULL`) and only if it won insert `next`. Returns false when the token was already rotated.
   */
  rotateRefreshToken(input: { tokenHash: string; now: number; next: RefreshTokenRow }): Promise<boolean>;
  /** Inserts a refresh token into a live grant (reuse within the reuse interval); false if revoked. */
  addRefreshToken(next: RefreshTokenRow): Promise<boolean>;
  /**
   * Only where every statement is a round trip (PostgreSQL): the usual refresh as one statement.
   * Consumes the token `tokenHash` and stores its successor under `nextTokenHash` (same grant,
   * client, user, scope and auth_time; expiring at the earlier of `now + ttl` and the grant's
   * creation + `absoluteTtl`) only if the token is unused, unexpired, issued to `clientId`, its
   * grant neither revoked nor older than `absoluteTtl`, and its user active. Returns the consumed
   * token and its user; undefined, having written nothing, when any of that does not hold.
   */
  rotateValidRefreshToken?(input: RotateValidRefreshToken): Promise<{ token: RefreshTokenRow; user: User } | undefined>;

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
