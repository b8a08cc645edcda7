// A grant (the token family issued from an authorization code, whose state is its refresh tokens'
// state, src/tokens/refresh.ts), its family with its user, an access token's state, and a refresh:
// what the domain code holds (camelCase). Their rows are ./grant-rows.ts's; the store's questions
// about them, ./grants.ts.
import type { User } from './users.ts';

/** A grant: the family of tokens issued from one authorization code, under the code's id. */
export interface Grant {
  id: string;
  userId: string;
  clientId: string;
  /** The scopes granted, space-separated, as the tokens carry them. */
  scope: string;
  authTime: number;
  createdAt: number;
  revokedAt: number | null;
  /** The generation of the family's current refresh token (src/tokens/refresh.ts). */
  refreshGeneration: number;
  /** When the current refresh token expires. */
  refreshExpiresAt: number;
  /** When the current refresh token was issued: the previous one was rotated away then. */
  refreshIssuedAt: number;
  /** The API the grant's access tokens are for (RFC 8707), or null for the default audience. */
  resource: string | null;
  /** How the user signed in (RFC 8176 amr), space-separated as scope is, for refreshed ID tokens; null: none. */
  amr: string | null;
  /** The level the sign-in reached (OIDC Core §2 acr), for refreshed ID tokens; null if not recorded. */
  acr: string | null;
  /**
   * The claims the authorization request's claims parameter asked for (src/oauth/claims-request.ts),
   * JSON, for userinfo and refreshed ID tokens; null or absent when it had none.
   */
  claimsRequest?: string | null;
  /** The sid of the session its code came from (OIDC `sid`), for refreshed ID tokens; null: none. */
  sid: string | null;
  /**
   * The DPoP key its refresh tokens are bound to (RFC 9449 §5, a public client's): a refresh must be
   * proven with it. Null or absent: not bound.
   */
  dpopJkt?: string | null;
}

/** A grant, which holds its refresh tokens' state (src/tokens/refresh.ts), and its user. */
export interface TokenFamily {
  grant: Grant;
  /** Undefined once the user has been deleted. */
  user: User | undefined;
}

export interface AccessTokenState {
  /** Undefined when the user has been deleted. */
  user: User | undefined;
  /** Undefined once housekeeping has removed the grant. */
  grant: Pick<Grant, 'id' | 'revokedAt' | 'claimsRequest'> | undefined;
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
  /** The thumbprint of the refresh request's DPoP key, which a bound family must match; null: no proof. */
  jkt?: string | null;
  now: number;
  /** The next token's lifetime; it never outlives the family's `absoluteTtl` from the grant. */
  ttl: number;
  absoluteTtl: number;
}

export type RotationOutcome<T> =
  | { rotated: true; family: TokenFamily; value: T }
  /** Nothing written; the family as it stands (undefined when unknown), which tells why. */
  | { rotated: false; family: TokenFamily | undefined };
