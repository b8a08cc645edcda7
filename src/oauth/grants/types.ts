// What a grant handler is given (a narrow slice of config and storage) and what it returns.
import type { Config } from '../../config/index.ts';
import type { Requester } from '../../events/index.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import type { ConnectionStore } from '../../store/connections.ts';
import type { EventStore } from '../../store/events.ts';
import type { GrantStore, RevocationStore } from '../../store/grants.ts';
import type { OneTimeStore } from '../../store/one-time.ts';
import type { ResourceStore } from '../../store/resources.ts';
import type { AccountStore } from '../../upstream/accounts.ts';
import type { UpstreamDeps } from '../../upstream/index.ts';
import type { ClientKeySets } from '../client-auth/keys.ts';
import type { DeviceAuthorizationStore } from '../../store/device-authorizations.ts';
import type { UserStore } from '../../store/users.ts';
import type { KeyStore } from '../../tokens/keystore.ts';
import type { RefreshTokens } from '../../tokens/refresh.ts';
import type { CodeSealer } from '../codes.ts';
import type { Params } from '../params.ts';

export type TokenConfig = Pick<
  Config,
  | 'issuer'
  | 'accessTokenTtl'
  | 'accessTokenAudience'
  | 'idTokenTtl'
  | 'refreshTokenTtl'
  | 'refreshTokenAbsoluteTtl'
  | 'publicRefreshTokenAbsoluteTtl'
  | 'refreshTokenReuseInterval'
  | 'signingAlg'
>;

/**
 * The store as the grants see it: the device grant, token exchange and ID-JAGs (./device-code.ts,
 * ./token-exchange.ts, ./jwt-bearer.ts) read more.
 */
export type GrantsStore = ClientStore &
  GrantStore &
  DeviceAuthorizationStore &
  Pick<UserStore, 'getUserById'> &
  ResourceStore &
  RevocationStore &
  EventStore &
  OneTimeStore &
  ConnectionStore &
  AccountStore;

/** How the issuers of ID-JAGs (upstream providers, --accept-id-jag) are reached, and their keys kept. */
export interface AssertionIssuers {
  upstream: UpstreamDeps;
  keys: ClientKeySets;
}

export interface GrantContext {
  config: TokenConfig;
  store: GrantsStore;
  keys: KeyStore;
  codes: CodeSealer;
  refreshTokens: RefreshTokens;
  now: number;
  /**
   * The thumbprint of the key of the request's DPoP proof (RFC 9449, src/oauth/dpop.ts), checked:
   * the access token is bound to it. Absent without a DPoP header.
   */
  dpopJkt?: string;
  /** Who sent the request: asked only when an event is recorded (a replay), never on the way to tokens. */
  requester?: () => Requester;
  /** For the jwt-bearer grant (ID-JAG); absent, it refuses every assertion as unverifiable. */
  issuers?: AssertionIssuers;
}

/** RFC 6749 §5.1 and OIDC Core §3.1.3.3. */
export interface TokenResponse {
  access_token: string;
  /**
   * DPoP for a token bound to the proof's key (RFC 9449 §5); `N_A` for a token that is not an access
   * token (RFC 8693 §2.2.1: an ID-JAG).
   */
  token_type: 'Bearer' | 'DPoP' | 'N_A';
  /** RFC 8693 §2.2.1: what a token exchange issued. */
  issued_token_type?: string;
  expires_in: number;
  /** Not for client_credentials (RFC 6749 §4.4.3). */
  refresh_token?: string;
  scope: string;
  id_token?: string;
}

export interface GrantHandler {
  readonly grantType: string;
  handle(ctx: GrantContext, client: Client, body: Params): Promise<TokenResponse>;
}

/**
 * A client's token lifetimes (`tessera clients update --access-token-ttl …`): its own where it set
 * one, never longer than the server's setting, which housekeeping and the signing keys' retirement
 * count on. Taken from the client the request already holds (cached): nothing more is read per token.
 */
export function accessTokenTtl(config: TokenConfig, client: Client): number {
  const own = client.lifetimes.accessToken;
  return own !== null && own < config.accessTokenTtl ? own : config.accessTokenTtl;
}

export function idTokenTtl(config: TokenConfig, client: Client): number {
  const own = client.lifetimes.idToken;
  return own !== null && own < config.idTokenTtl ? own : config.idTokenTtl;
}

/** How long a refresh token lives from its issue (each rotation starts it again), within the family's limit. */
export function refreshTokenTtl(config: TokenConfig, client: Client): number {
  const own = client.lifetimes.refreshToken;
  return own !== null && own < config.refreshTokenTtl ? own : config.refreshTokenTtl;
}

/** How long a client's refresh token family may live: shorter for a public client (a browser or native app). */
export function refreshAbsoluteTtl(config: TokenConfig, client: Client): number {
  return client.tokenEndpointAuthMethod === 'none'
    ? Math.min(config.refreshTokenAbsoluteTtl, config.publicRefreshTokenAbsoluteTtl)
    : config.refreshTokenAbsoluteTtl;
}

/** How long a new family's first refresh token lives: its lifetime, within the family's. */
export function firstRefreshTtl(config: TokenConfig, client: Client): number {
  return Math.min(refreshTokenTtl(config, client), refreshAbsoluteTtl(config, client));
}
