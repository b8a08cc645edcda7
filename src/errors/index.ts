// One error hierarchy for every protocol error. Clients see `error` and `error_description`; an
// optional `detail` is for operators only (fosite's Debug beside its Hint): logged, never sent.
// src/http/plugins/errors.ts is the single place that turns these into responses.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'unmet_authentication_requirements'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_request_object'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_target'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  /** What an operator needs to know (which client, which check), never sent to the client. */
  readonly detail: string | undefined;
  constructor(error: OAuthErrorCode, description: string, status = 400, detail?: string) {
    // RFC 6749 §4.1.2.1, §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E. Descriptions are
    // fixed texts (what the caller sent goes into `detail`); this keeps any other character out too.
    super(description.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, ''));
    this.error = error;
    this.status = status;
    this.detail = detail;
  }
  override get name(): string {
    return `OAuthError(${this.error})`;
  }
}

/** The subclass of OAuthError for one error code and its HTTP status. */
function oauthError(error: OAuthErrorCode, status = 400) {
  return class extends OAuthError {
    constructor(description: string, detail?: string) {
      super(error, description, status, detail);
    }
  };
}

export const InvalidRequest = oauthError('invalid_request');
/** RFC 6749 §5.2: client authentication failed; 401 with WWW-Authenticate. */
export const InvalidClient = oauthError('invalid_client', 401);
export const InvalidGrant = oauthError('invalid_grant');
export const UnauthorizedClient = oauthError('unauthorized_client');
export const UnsupportedGrantType = oauthError('unsupported_grant_type');
export const InvalidScope = oauthError('invalid_scope');
export const AccessDenied = oauthError('access_denied', 403);
export const UnsupportedResponseType = oauthError('unsupported_response_type');
export const LoginRequired = oauthError('login_required');
export const ConsentRequired = oauthError('consent_required');
/**
 * OpenID Connect Unmet Authentication Requirements 1.0 §2: the sign-in cannot give what the client
 * asked (acr_values asking for more than the user has enrolled).
 */
export const UnmetAuthenticationRequirements = oauthError('unmet_authentication_requirements');
export const RequestNotSupported = oauthError('request_not_supported');
export const RequestUriNotSupported = oauthError('request_uri_not_supported');
/** RFC 9101 §7, OIDC Core §6.4: a request object that cannot be used. */
export const InvalidRequestObject = oauthError('invalid_request_object');
/** RFC 8707 §2: the resource asked for is malformed, unknown, or not one the grant covers. */
export const InvalidTarget = oauthError('invalid_target');
/** RFC 7591 §3.2.2: a redirect URI the registration refuses. */
export const InvalidRedirectUri = oauthError('invalid_redirect_uri');
/** RFC 7591 §3.2.2: any other metadata the registration refuses. */
export const InvalidClientMetadata = oauthError('invalid_client_metadata');
/** RFC 8628 §3.5: the person has not yet answered on the verification page; poll again. */
export const AuthorizationPending = oauthError('authorization_pending');
/** RFC 8628 §3.5: polled sooner than the interval; the interval has grown by 5 seconds. */
export const SlowDown = oauthError('slow_down');
/** RFC 8628 §3.5: the device code has expired; start again. */
export const ExpiredToken = oauthError('expired_token');
/** RFC 8628 §3.5: the person denied the device's request, answered at the token endpoint (400, not 403). */
export const DeviceAccessDenied = oauthError('access_denied');
/**
 * Too many failed authentications (src/authn/throttle.ts): 429 with Retry-After. RFC 6749 has no
 * code for it; `temporarily_unavailable` tells the client to try again later rather than that its
 * credentials are wrong (which it cannot know while throttled).
 */
export class TooManyAttempts extends OAuthError {
  readonly retryAfter: number;
  constructor(description: string, refusal: { retryAfter: number; key: string }) {
    super('temporarily_unavailable', description, 429, `throttled: ${refusal.key}`);
    this.retryAfter = refusal.retryAfter;
  }
}

/** RFC 6750 §3.1: missing, expired, revoked or malformed access token; 401. */
export const InvalidToken = oauthError('invalid_token', 401);
/** RFC 6750 §3.1: a valid token without the scope the request needs; 403. */
export const InsufficientScope = oauthError('insufficient_scope', 403);

/** RFC 9449 §5: a DPoP proof that is missing where required, malformed, wrong or used before. */
export const InvalidDpopProof = oauthError('invalid_dpop_proof');

/** RFC 9449 §8 and §9: the proof must carry the server's nonce, given in the DPoP-Nonce header. */
export class UseDpopNonce extends OAuthError {
  readonly nonce: string;
  constructor(description: string, nonce: string) {
    super('use_dpop_nonce', description, 400);
    this.nonce = nonce;
  }
}

/**
 * RFC 9449 §7.2: a DPoP-bound access token presented as a Bearer token; invalid_token (401), its
 * challenge naming the DPoP scheme.
 */
export class DpopBoundToken extends OAuthError {
  constructor(description: string) {
    super('invalid_token', description, 401);
  }
}

/** The errors shown before a redirect URI is trusted; the last two of request_uris and request objects (RFC 9101). */
export type UntrustedRedirectErrorCode =
  'invalid_request' | 'invalid_client' | 'invalid_request_uri' | 'invalid_request_object';

/**
 * Authorization-endpoint errors found before the redirect URI is trusted (unknown client,
 * unregistered redirect URI): shown as an HTML page, never redirected (RFC 6749 §4.1.2.1).
 */
export class UntrustedRedirectError extends Error {
  readonly error: UntrustedRedirectErrorCode;
  /** As OAuthError's: for the operator's log only. */
  readonly detail: string | undefined;
  constructor(error: UntrustedRedirectErrorCode, description: string, detail?: string) {
    super(description);
    this.error = error;
    this.detail = detail;
  }
}
