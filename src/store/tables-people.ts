// Rows of the ways people sign in and are reached (passkeys and their challenges, authenticator apps,
// recovery codes, upstream providers and links, mails and their links) and of restore fences; the
// conventions of ./tables.ts.
import type { OutboxRow } from './outbox-row.ts';

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
  /** When its counter went back and it was suspended (a cloned authenticator?); null: usable. Migration 011. */
  suspended_at: number | null;
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
  /** 1: its ID-JAGs are redeemed at the token endpoint (migration 025; not null, default 0). */
  accept_id_jag?: number;
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

/**
 * The one row (id 'database') that tells a database gone back in time (src/store/restore-watch.ts):
 * a random identity, a counter bumped by every instance at start and on a timer, the PostgreSQL
 * timeline last seen (null on SQLite), and when it was last bumped.
 */
export interface RestoreWatchRow {
  id: string;
  database: string;
  counter: number;
  timeline: number | null;
  marked_at: number;
  /** The instance that bumped the counter last (migration 028; a random id per process); null before. */
  marked_by?: string | null;
}

/** A mail in the outbox (src/mail): its message encrypted until it is sent, then erased. */
export interface MailRow extends OutboxRow<'sent'> {
  id: string;
  /** What it says: `reset`, `verify`, `invite`, `signup`, `email-changed`. */
  kind: string;
  user_id: string | null;
  recipient: string;
  /** JSON {subject, text, html}, AES-256-GCM under TESSERA_SECRET; null once sent or given up. */
  message_enc: string | null;
}

/** A mail's link's token, by its SHA-256 (hex): single use, short-lived (src/authn/mail-link/tokens.ts). */
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
