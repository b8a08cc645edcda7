// Rows as they are stored. Timestamps are integer epoch seconds; booleans are 0/1 integers, so one
// Kysely implementation serves SQLite and PostgreSQL alike. Secrets are stored as hashes only.

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
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'none';
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

/** Failures counted for a key (src/oauth/throttle.ts). */
export interface ThrottleRow {
  key: string;
  subject: string;
  failures: number;
  last_failure_at: number;
}

/** A security event of the audit trail (src/events); `data` is JSON. */
export interface EventRow {
  id: string;
  at: number;
  type: string;
  user_id: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  data: string | null;
}

/** An API registered by the operator (RFC 8707): access tokens for it carry `aud` = uri. */
export interface ResourceRow {
  uri: string;
  name: string;
  /** Space-separated scopes the API accepts. */
  scope: string;
  created_at: number;
}

/** An access token (JWT) revoked before its expiry, kept until it would have expired (RFC 7009). */
export interface RevokedAccessTokenRow {
  jti: string;
  expires_at: number;
}

/** A webhook subscription: where, which event types, and its signing secret (encrypted, src/events/webhooks). */
export interface WebhookRow {
  id: string;
  url: string;
  /** Space-separated event types. */
  events: string;
  /** The user whose webhook it is (created with a `webhooks` token); null for the operator's. */
  owner_id: string | null;
  secret_enc: string;
  /** The secret before the last rotation, still signing alongside until previous_until. */
  previous_secret_enc: string | null;
  previous_until: number | null;
  created_at: number;
}

/** One event for one webhook: the outbox row, written in the same transaction as the event. */
export interface WebhookDeliveryRow {
  /** `{event id}.{webhook id}`: the webhook-id header, the same on every attempt. */
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body sent. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  /** Attempts made, ever: the number of the last one logged. */
  attempts: number;
  /** The attempts made before the last redelivery: the retry schedule counts from here. */
  retry_base: number;
  next_attempt_at: number;
  /** While an instance is attempting it: no other takes it until then. */
  locked_until: number | null;
  created_at: number;
  last_status: number | null;
  last_error: string | null;
  finished_at: number | null;
}

/** One attempt of a delivery: its answer's status (null when none came), how long it took, what failed. */
export interface WebhookAttemptRow {
  delivery_id: string;
  attempt: number;
  at: number;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/** A user's passkey (WebAuthn credential), src/store/passkeys.ts. */
export interface PasskeyRow {
  /** Tessera's id of it (forms and events name it). */
  id: string;
  user_id: string;
  /** The authenticator's credential id, base64url: unique. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The signature counter last seen; 0 for an authenticator that keeps none. */
  sign_count: number;
  /** JSON array of the transports the browser reported (internal, hybrid, usb, …). */
  transports: string;
  /** The credential may be synced to other devices (a synced passkey): fixed for its life. */
  backup_eligible: number;
  backed_up: number;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** An upstream provider a person may sign in with (src/upstream): OpenID Connect or GitHub. */
export interface UpstreamProviderRow {
  /** The operator's name for it: in the callback URI, idp_hint and TESSERA_DEFAULT_PROVIDER. */
  id: string;
  type: 'oidc' | 'github';
  /** What the sign-in page's button says. */
  name: string;
  /** The OpenID Connect issuer, whose discovery document configures it; null for GitHub. */
  issuer: string | null;
  client_id: string;
  /** The client secret, AES-256-GCM under a key derived from TESSERA_SECRET. */
  client_secret_enc: string;
  /** Space-separated scopes asked of the provider. */
  scope: string;
  /** 1: a verified email the provider states links to the user with that verified email here. */
  trust_email: number;
  /** 1: no user is created at a first sign-in; the person links an existing account. */
  link_only: number;
  /** 1: the provider's `amr` containing `mfa` counts as two factors. */
  trust_upstream_mfa: number;
  /** 1: the provider's own hosts may be on loopback, private or link-local addresses. */
  allow_private_network: number;
  /** Space-separated email domains whose login_hint sends the person straight to this provider. */
  login_hint_domains: string;
  /** GitHub (or GitHub Enterprise Server): the web base and the REST API base; null for OpenID Connect. */
  github_url: string | null;
  github_api_url: string | null;
  created_at: number;
  updated_at: number;
}

/** A person at an upstream provider (provider, subject) linked to a user here. */
export interface UpstreamLinkRow {
  provider_id: string;
  /** The provider's identifier of the person (`sub`; GitHub's numeric user id). */
  subject: string;
  user_id: string;
  /** The email the provider stated when it was linked, for the account page. */
  email: string | null;
  created_at: number;
  last_used_at: number | null;
}

/** A user's authenticator app (TOTP, RFC 6238), src/store/second-factors.ts. */
export interface TotpCredentialRow {
  user_id: string;
  /** The shared secret (base32), AES-256-GCM under a key derived from TESSERA_SECRET. */
  secret_enc: string;
  /** The last time step (Unix time / 30 s) a code was accepted for; 0 before the first. */
  last_step: number;
  created_at: number;
  last_used_at: number | null;
}

/** One of a user's recovery codes: SHA-256 of the user's id and the code, hex. */
export interface RecoveryCodeRow {
  user_id: string;
  hash: string;
  created_at: number;
  used_at: number | null;
  /** The id of the event that recorded its use: the use that won writes it. */
  used_event: string | null;
}

/** A WebAuthn challenge already answered (SHA-256, hex), kept until it would have expired. */
export interface WebauthnChallengeRow {
  hash: string;
  expires_at: number;
}

/**
 * A restore fence (./restores.ts): a mark `tessera backup` leaves in its copy (fenced_at null until a
 * start on the restored database fences it), or the record of a `tessera restore-finish`.
 */
export interface RestoreFenceRow {
  id: string;
  /** When the backup was taken; null for a restore-finish of a copy made by other means. */
  taken_at: number | null;
  fenced_at: number | null;
}

/** A mail in the outbox (src/mail): its message encrypted until it is sent, then erased. */
export interface MailRow {
  id: string;
  /** What it says: `reset`, `verify`, `invite`, `signup`, `email-changed`. */
  kind: string;
  user_id: string | null;
  recipient: string;
  /** JSON {subject, text, html}, AES-256-GCM under TESSERA_SECRET; null once sent or given up. */
  message_enc: string | null;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  retry_base: number;
  next_attempt_at: number;
  /** While an instance is sending it: no other takes it until then. */
  locked_until: number | null;
  created_at: number;
  last_error: string | null;
  finished_at: number | null;
}

/** A mail's link's token, by its SHA-256 (hex): single use, short-lived (src/mail/tokens.ts). */
export interface MailTokenRow {
  hash: string;
  purpose: 'reset' | 'verify' | 'invite' | 'signup';
  user_id: string | null;
  /** The address the link went to (for `verify`, the address it verifies). */
  email: string;
  /** A reset's: the stamp of the password it was issued under; any change of password kills it. */
  stamp: string | null;
  /** A sign-up's account until it is verified (JSON: username, password hash, name). */
  data: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The redemption that used it (a random id): what its effects, written with it, are conditioned on. */
  used_by: string | null;
}

export interface Database {
  revoked_access_tokens: RevokedAccessTokenRow;
  clients: ClientRow;
  users: UserRow;
  sessions: SessionRow;
  consents: ConsentRow;
  grants: GrantRow;
  signing_keys: SigningKeyRow;
  events: EventRow;
  throttles: ThrottleRow;
  resources: ResourceRow;
  webhooks: WebhookRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
  passkeys: PasskeyRow;
  webauthn_challenges: WebauthnChallengeRow;
  totp_credentials: TotpCredentialRow;
  recovery_codes: RecoveryCodeRow;
  restore_fences: RestoreFenceRow;
  upstream_providers: UpstreamProviderRow;
  upstream_links: UpstreamLinkRow;
  mails: MailRow;
  mail_tokens: MailTokenRow;
}
