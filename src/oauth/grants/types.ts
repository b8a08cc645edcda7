// What a grant handler is given (a narrow slice of config and storage) and what it returns.
import type { Config } from '../../config/index.ts';
import type { Requester } from '../../events/index.ts';
import type { Client, ClientStore } from '../../store/clients.ts';
import type { DeviceAuthorizationStore } from '../../store/device-authorizations.ts';
import type { GrantStore } from '../../store/grants.ts';
import type { ResourceStore } from '../../store/resources.ts';
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

export interface GrantContext {
  config: TokenConfig;
  store: ClientStore & GrantStore & ResourceStore & DeviceAuthorizationStore & Pick<UserStore, 'getUserById'>;
  keys: KeyStore;
  codes: CodeSealer;
  refreshTokens: RefreshTokens;
  now: number;
  /** Who sent the request: asked only when an event is recorded (a replay), never on the way to tokens. */
  requester?: () => Requester;
}

/** RFC 6749 §5.1 and OIDC Core §3.1.3.3. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
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
