// What the operator gives to create or change a client (`tessera clients create|update`, the admin
// API, the console): the input of ./clients.ts's createClient and updateClient, before its checks.
import type { Client, LogoutUri, TokenLifetimes } from '../store/clients.ts';
import type { ConfidentialAuthMethod } from './client-keys.ts';

export interface CreateClientInput {
  name: string;
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  scopes: string[];
  public: boolean;
  firstParty?: boolean;
  authMethod?: ConfidentialAuthMethod;
  alg?: 'RS256' | 'ES256';
  /** Its public keys (private_key_jwt, request objects): a JWK Set or where it is published. */
  keys?: Pick<Client, 'jwks' | 'jwksUri'> | undefined;
  /** client_secret_jwt: how its secret is encrypted for the server to keep (src/oauth/client-auth/assertion.ts). */
  sealSecret?: (secret: string) => string;
  /** Its authorization requests must be pushed (RFC 9126 §6). */
  requirePushedAuthorizationRequests?: boolean;
  /** Its token requests must carry a DPoP proof (RFC 9449 §5.2, `--require-dpop`). */
  requireDpop?: boolean;
  /** The alg its request objects must be signed with (`none`: unsigned); null or absent: any asymmetric. */
  requestObjectSigningAlg?: string | null | undefined;
  /** RFC 7591 grant type names; authorization_code and refresh_token by default. */
  grantTypes?: string[];
  /** Origins that may call the token endpoints from a browser, besides a public client's redirect URIs'. */
  allowedOrigins?: string[];
  /** Its own token lifetimes (./commands/lifetimes.ts); the server's by default. */
  lifetimes?: TokenLifetimes;
  /** Its sign-ins need two factors (`--require-mfa`). */
  requireMfa?: boolean;
  /** Marked as an admin client (`--admin`): it may hold the `admin` scope. */
  admin?: boolean;
  /** The roles it may see (`--roles`); absent: every role. */
  allowedRoles?: string[];
  /** Back-Channel Logout 1.0 (`--backchannel-logout-uri`, `--backchannel-logout-session-required`). */
  backchannelLogout?: LogoutUri;
  /** Front-Channel Logout 1.0 (`--frontchannel-logout-uri`, `--frontchannel-logout-session-required`). */
  frontchannelLogout?: LogoutUri;
  /** The audiences it may exchange tokens for (RFC 8693, `--exchange-audience`). */
  exchangeAudiences?: string[];
}

/** What `tessera clients update` changes; a field left out stays as it is. */
export interface UpdateClientInput {
  name?: string | undefined;
  /** Replaces the redirect URIs (the same rules as at creation). */
  redirectUris?: string[] | undefined;
  postLogoutRedirectUris?: string[] | undefined;
  scopes?: string[] | undefined;
  grantTypes?: string[] | undefined;
  allowedOrigins?: string[] | undefined;
  lifetimes?: TokenLifetimes | undefined;
  /** `--require-mfa` or `--no-require-mfa`. */
  requireMfa?: boolean | undefined;
  /** A new way to authenticate: to a secret method from none, or to client_secret_jwt, a new secret is issued. */
  authMethod?: ConfidentialAuthMethod | undefined;
  /** Replaces its public keys. */
  keys?: Pick<Client, 'jwks' | 'jwksUri'> | undefined;
  sealSecret?: (secret: string) => string;
  /** `--require-pushed-authorization-requests` or `--no-require-pushed-authorization-requests`. */
  requirePushedAuthorizationRequests?: boolean | undefined;
  /** `--require-dpop` or `--no-require-dpop`. */
  requireDpop?: boolean | undefined;
  /** `--request-object-signing-alg`: an alg, `none`, or null for any asymmetric one. */
  requestObjectSigningAlg?: string | null | undefined;
  /** `--admin` or `--no-admin`. */
  admin?: boolean | undefined;
  /** `--roles a,b`, or null (`--all-roles`) for every role. */
  allowedRoles?: string[] | null | undefined;
  /** A new backchannel_logout_uri and its session_required, or null to remove it (`--no-backchannel-logout-uri`). */
  backchannelLogout?: LogoutUri | null | undefined;
  /** Likewise the frontchannel_logout_uri (`--no-frontchannel-logout-uri`). */
  frontchannelLogout?: LogoutUri | null | undefined;
  /** Replaces the audiences it may exchange tokens for; [] for none. */
  exchangeAudiences?: string[] | undefined;
}
