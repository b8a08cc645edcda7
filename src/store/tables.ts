// Rows as they are stored. Timestamps are integer epoch seconds; booleans are 0/1 integers, so one
// Kysely implementation serves SQLite and PostgreSQL alike. Secrets are stored as hashes only.
import type { Generated } from 'kysely';
import type * as Events from './tables-events.ts';
import type * as People from './tables-people.ts';
import type * as Requests from './tables-requests.ts';

export type * from './tables-events.ts';
export type * from './tables-people.ts';
export type * from './tables-requests.ts';

export interface ClientRow {
  client_id: string;
  /** SHA-256 (hex) of the client secret, a 256-bit random value, so a fast hash suffices; null for public clients. */
  secret_hash: string | null;
  name: string;
  /** JSON array of exact redirect URI strings. */
  redirect_uris: string;
  /** JSON array of exact post-logout redirect URI strings. */
  post_logout_redirect_uris: string;
  /** Space-separated scopes the client may request. */
  scope: string;
  /** JSON array of grant types, e.g. ["authorization_code","refresh_token"]. */
  grant_types: string;
  /** JSON array of origins allowed to call the token, userinfo and revocation endpoints (CORS). */
  allowed_origins: string;
  token_endpoint_auth_method:
    'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none';
  first_party: number;
  id_token_signed_response_alg: string | null;
  created_at: number;
  /** 'operator' (the CLI) or 'dynamic' (RFC 7591 registration). */
  registered_via: string;
  /** The user who registered it with their access token (RFC 7591, TESSERA_REGISTRATION=authenticated). */
  owner_id: string | null;
  /** SHA-256 (hex) of the registration access token (RFC 7592); null for clients the operator created. */
  registration_token_hash: string | null;
  /** JSON object of the descriptive RFC 7591 metadata (client_uri, logo_uri, contacts, …). */
  metadata: string;
  /** The secret before the last rotation (SHA-256 hex), still accepted until previous_secret_expires_at. */
  previous_secret_hash: string | null;
  previous_secret_expires_at: number | null;
  /** The client's own token lifetimes in seconds (migration 004); null: the server's. */
  access_token_ttl: number | null;
  refresh_token_ttl: number | null;
  id_token_ttl: number | null;
  /** 1: the client's sign-ins need two factors (migration 006); null or 0: the server's policy. */
  require_mfa: number | null;
  /** Its public keys, a JSON JWK Set (migration 017); null: none, or at jwks_uri. */
  jwks?: string | null;
  /** Where its public keys are published (migration 017). */
  jwks_uri?: string | null;
  /** client_secret_jwt: its secret encrypted under TESSERA_SECRET (src/tokens/at-rest.ts), to check HMACs. */
  secret_enc?: string | null;
  /** 1: its authorization requests must be pushed (RFC 9126 §6, migration 017). */
  require_par?: number | null;
  /** The alg its request objects are signed with (`none` allowed only so); null: any asymmetric one. */
  request_object_signing_alg?: string | null;
  /** 1: marked by the operator as an admin client, which alone may hold the `admin` scope (migration 018). */
  admin: Generated<number>;
  /** Space-separated roles the client may see in tokens (migration 018); null: every role. */
  allowed_roles: string | null;
  /** Back-Channel Logout 1.0 §2.2 (migration 020): where logout tokens are posted; null: none. */
  backchannel_logout_uri: string | null;
  /** 1: its logout tokens must carry `sid` (not null, default 0; nullable here so that an insert may omit it). */
  backchannel_logout_session_required: number | null;
  /** Front-Channel Logout 1.0 §2 (migration 027): the page loaded in an iframe as a session ends; null: none. */
  frontchannel_logout_uri: string | null;
  /** 1: that page is given `iss` and `sid` (not null, default 0; nullable here so that an insert may omit it). */
  frontchannel_logout_session_required: number | null;
  /** 1: its token requests must carry a DPoP proof (RFC 9449 §5.2, migration 024); null or 0: not. */
  require_dpop?: number | null;
  /** Space-separated audiences it may exchange tokens for (RFC 8693, migration 025); null: none. */
  exchange_audiences?: string | null;
}

export interface UserRow {
  id: string;
  username: string;
  email: string;
  email_verified: number;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  /** argon2id PHC string; null means the user cannot log in with a password. */
  password_hash: string | null;
  disabled: number;
  created_at: number;
  updated_at: number;
  /** Space-separated role names (migration 018); '' for none. */
  roles: string;
  /** The standard claims (OIDC Core §5.1) held beyond the columns, JSON (src/tokens/held-claims.ts); null: none. */
  claims: string | null;
}

export interface SessionRow {
  /** SHA-256 of the random cookie value. */
  id: string;
  user_id: string;
  /** When the sign-in began (its first factor); a step-up keeps it. */
  auth_time: number;
  /**
   * JSON array of the sign-in's factors, each {method, amr, at} (src/authn/factors.ts); null for a
   * session from before migration 002 (a password, at auth_time).
   */
  factors: string | null;
  created_at: number;
  expires_at: number;
  /** The session's public id (OIDC `sid`, migration 020), random; null for sessions from before. */
  sid: string | null;
}

export interface ConsentRow {
  user_id: string;
  client_id: string;
  /** Space-separated scopes the user has consented to for this client. */
  scope: string;
  updated_at: number;
}

/** A grant is the family of tokens issued from one authorization code, under the code's id. */
export interface GrantRow {
  id: string;
  user_id: string;
  client_id: string;
  scope: string;
  auth_time: number;
  created_at: number;
  revoked_at: number | null;
  /** The generation of the family's current refresh token (src/tokens/refresh.ts). */
  refresh_generation: number;
  /** When the current refresh token expires. */
  refresh_expires_at: number;
  /** When the current refresh token was issued: the previous one was rotated away then. */
  refresh_issued_at: number;
  /** The API the grant's access tokens are for (RFC 8707), or null for the default audience. */
  resource: string | null;
  /** The sign-in's methods (RFC 8176), space-separated, for refreshed ID tokens; null when none were recorded. */
  amr: string | null;
  /** The sign-in's level (OIDC Core §2 acr), for refreshed ID tokens; null when none was recorded. */
  acr: string | null;
  /** The claims the request's claims parameter asked for (src/oauth/claims-request.ts), JSON; null: none. */
  claims_request?: string | null;
  /** The sid of the session the code came from (migration 020), for refreshed ID tokens and logout. */
  sid: string | null;
  /** The DPoP key (RFC 7638 thumbprint) a public client's refresh tokens are bound to (migration 024). */
  dpop_jkt?: string | null;
}

export interface SigningKeyRow {
  kid: string;
  alg: string;
  public_jwk: string;
  /** Private JWK, encrypted with AES-256-GCM under a key derived from TESSERA_SECRET. */
  private_jwk_enc: string;
  created_at: number;
  /** From then on it signs (until a successor activates); published from its creation. */
  activates_at: number;
  /** The kid of the key it replaces, or `initial:<alg>`: unique, so one rotation inserts one key. */
  successor_of: string;
}

/** Failures counted for a key, and its attempts in flight (src/authn/throttle.ts). */
export interface ThrottleRow {
  key: string;
  subject: string;
  failures: number;
  last_failure_at: number;
  /** Attempts admitted and not yet settled (migration 010). */
  pending: Generated<number>;
  /** When the pending attempts stop counting (their lease). */
  pending_until: Generated<number>;
}

/** An API registered by the operator (RFC 8707): access tokens for it carry `aud` = uri. */
export interface ResourceRow {
  uri: string;
  name: string;
  /** Space-separated scopes the API accepts. */
  scope: string;
  created_at: number;
}

export interface Database {
  revoked_access_tokens: Requests.RevokedAccessTokenRow;
  clients: ClientRow;
  used_jtis: Requests.UsedJtiRow;
  pushed_requests: Requests.PushedRequestRow;
  device_authorizations: Requests.DeviceAuthorizationRow;
  users: UserRow;
  sessions: SessionRow;
  consents: ConsentRow;
  grants: GrantRow;
  signing_keys: SigningKeyRow;
  events: Events.EventRow;
  throttles: ThrottleRow;
  resources: ResourceRow;
  webhooks: Events.WebhookRow;
  webhook_deliveries: Events.WebhookDeliveryRow;
  webhook_attempts: Events.WebhookAttemptRow;
  passkeys: People.PasskeyRow;
  webauthn_challenges: People.WebauthnChallengeRow;
  totp_credentials: People.TotpCredentialRow;
  recovery_codes: People.RecoveryCodeRow;
  restore_fences: People.RestoreFenceRow;
  restore_watch: People.RestoreWatchRow;
  upstream_providers: People.UpstreamProviderRow;
  upstream_links: People.UpstreamLinkRow;
  mails: People.MailRow;
  logout_deliveries: Events.LogoutDeliveryRow;
  mail_tokens: People.MailTokenRow;
  connections: ConnectionRow;
}

/**
 * The operator's policy for minting ID-JAGs (migration 025): a client may ask for an identity
 * assertion for `audience` (another authorization server's issuer), where it is `remote_client_id`,
 * for the scopes in `scope` (space-separated) and, when set, the resource `resource`.
 */
export interface ConnectionRow {
  id: string;
  client_id: string;
  audience: string;
  remote_client_id: string;
  scope: string;
  resource: string | null;
  created_at: number;
  updated_at: number;
}
