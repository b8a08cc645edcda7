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
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_token'
  | 'insufficient_scope';

export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  /** What an operator needs to know (which client, which check), never sent to the client. */
  readonly detail: string | undefined;
  constructor(error: OAuthErrorCode, description: string, status = 400, detail?: string) {
    super(description);
    this.error = error;
    this.status = status;
    this.detail = detail;
  }
  override get name(): string {
    return `OAuthError(${this.error})`;
  }
}

export class InvalidRequest extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_request', description, 400, detail);
  }
}
/** RFC 6749 §5.2: client authentication failed; 401 with WWW-Authenticate. */
export class InvalidClient extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_client', description, 401, detail);
  }
}
export class InvalidGrant extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_grant', description, 400, detail);
  }
}
export class UnauthorizedClient extends OAuthError {
  constructor(description: string, detail?: string) {
    super('unauthorized_client', description, 400, detail);
  }
}
export class UnsupportedGrantType extends OAuthError {
  constructor(description: string, detail?: string) {
    super('unsupported_grant_type', description, 400, detail);
  }
}
export class InvalidScope extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_scope', description, 400, detail);
  }
}
export class AccessDenied extends OAuthError {
  constructor(description: string, detail?: string) {
    super('access_denied', description, 403, detail);
  }
}
export class UnsupportedResponseType extends OAuthError {
  constructor(description: string, detail?: string) {
    super('unsupported_response_type', description, 400, detail);
  }
}
export class LoginRequired extends OAuthError {
  constructor(description: string, detail?: string) {
    super('login_required', description, 400, detail);
  }
}
export class ConsentRequired extends OAuthError {
  constructor(description: string, detail?: string) {
    super('consent_required', description, 400, detail);
  }
}
export class RequestNotSupported extends OAuthError {
  constructor(description: string, detail?: string) {
    super('request_not_supported', description, 400, detail);
  }
}
export class RequestUriNotSupported extends OAuthError {
  constructor(description: string, detail?: string) {
    super('request_uri_not_supported', description, 400, detail);
  }
}
/** RFC 6750 §3.1: missing, expired, revoked or malformed access token; 401. */
export class InvalidToken extends OAuthError {
  constructor(description: string, detail?: string) {
    super('invalid_token', description, 401, detail);
  }
}

/**
 * Authorization-endpoint errors found before the redirect URI is trusted (unknown client,
 * unregistered redirect URI): shown as an HTML page, never redirected (RFC 6749 §4.1.2.1).
 */
export class UntrustedRedirectError extends Error {
  readonly error: 'invalid_request' | 'invalid_client';
  constructor(error: 'invalid_request' | 'invalid_client', description: string) {
    super(description);
    this.error = error;
  }
}
