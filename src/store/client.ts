// A client as the domain code sees it (camelCase): its fields, and the token lifetimes, logout
// channels and descriptive metadata it holds. Its row is ./tables.ts's ClientRow (./client-rows.ts
// maps the one to the other); what the store answers about clients is ./clients.ts.

export type TokenEndpointAuthMethod =
  'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none';

/** A JWK Set (RFC 7517 §5) of a client's public keys. */
export interface ClientJwks {
  keys: Array<Record<string, unknown>>;
}

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
  /** Its own token lifetimes, seconds; null for the server's (src/oauth/grants/lifetimes.ts). */
  lifetimes: TokenLifetimes;
  /** Its sign-ins need two factors (`--require-mfa`, src/authn/policy.ts); absent: false. */
  requireMfa?: boolean;
  // Migration 017's (a client's keys and pushed requests): absent or null, none (null clears it on update).
  /** Its public keys (private_key_jwt, request objects), given inline. */
  jwks?: ClientJwks | null;
  /** Where its public keys are published (fetched through src/net/outbound.ts). */
  jwksUri?: string | null;
  /** client_secret_jwt: its secret encrypted under TESSERA_SECRET (src/oauth/client-auth/assertion.ts). */
  secretEncrypted?: string | null;
  /** Its authorization requests must be pushed (RFC 9126 §6, `--require-pushed-authorization-requests`). */
  requirePushedAuthorizationRequests?: boolean | null;
  /** The alg its request objects must be signed with (`none` only if so registered); absent: any asymmetric. */
  requestObjectSigningAlg?: string | null;
  /** Marked by the operator (`--admin`): it alone may hold the `admin` scope (src/admin/roles.ts); absent: false. */
  admin?: boolean;
  /** The roles it may see in tokens (`--roles`), or null (absent) for every role. */
  allowedRoles?: string[] | null;
  /**
   * Back-Channel Logout 1.0 §2.2: where its logout tokens are posted, and whether they must carry
   * `sid`; absent: it is not told of sign-outs (null: an update that removes them).
   */
  backchannelLogout?: LogoutUri | null;
  /**
   * Front-Channel Logout 1.0 §2: the page loaded in a hidden iframe as a session ends, and whether it
   * is given `iss` and `sid`; absent: none (null: an update that removes it).
   */
  frontchannelLogout?: LogoutUri | null;
  /** Its token requests must carry a DPoP proof (RFC 9449 §5.2, `--require-dpop`); absent: false. */
  requireDpop?: boolean;
  /**
   * The audiences it may exchange tokens for (RFC 8693, `--exchange-audience`, src/oauth/grants/token-exchange.ts);
   * absent or empty: none.
   */
  exchangeAudiences?: string[];
}

/** Where a client hears of a session's end, and whether it must be told its `sid`. */
export interface LogoutUri {
  uri: string;
  sessionRequired: boolean;
}

/** How a client hears of a session's end: Back-Channel Logout 1.0, Front-Channel Logout 1.0. */
export const LOGOUT_CHANNELS = ['backchannel', 'frontchannel'] as const;
export type LogoutChannel = (typeof LOGOUT_CHANNELS)[number];

/** A client's token lifetimes in seconds, each shorter than the server's setting or null for it. */
export interface TokenLifetimes {
  accessToken: number | null;
  refreshToken: number | null;
  idToken: number | null;
}

/** The server's lifetimes, for clients that set none of their own. */
export const SERVER_LIFETIMES: TokenLifetimes = Object.freeze({ accessToken: null, refreshToken: null, idToken: null });

export interface ClientDescription {
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}
