// RFC 6750 §3 errors of an API that accepts Tessera's access tokens, with the WWW-Authenticate challenge
// each one sends: Bearer, or DPoP's (RFC 9449 §7.1), naming the API's metadata (RFC 9728 §5.1).
import { DPOP_ALGS } from '../tokens/dpop-proof.ts';

/** `invalid_dpop_proof`: RFC 9449 §7.1, a DPoP proof missing, wrong or used before (401). */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'invalid_dpop_proof';

export interface BearerErrorOptions {
  /**
   * The request carried no access token: no Authorization header, or one for another scheme. RFC 6750 §3.1:
   * the challenge then names no error code; `code` stays `invalid_token` (status 401) for callers.
   */
  tokenMissing?: boolean;
  /** RFC 9728 §5.1: the URL of the API's protected resource metadata, named in the challenge. */
  resourceMetadata?: string;
  /** RFC 9449 §7.1: the challenge is the DPoP scheme's (a DPoP request, or a DPoP-bound token sent as Bearer). */
  dpop?: boolean;
}

/** An RFC 6750 §3.1 error: `status` and `wwwAuthenticate` are ready to send. */
export class BearerError extends Error {
  readonly code: BearerErrorCode;
  readonly status: 400 | 401 | 403;
  readonly scope: string | undefined;
  readonly tokenMissing: boolean;
  readonly resourceMetadata: string | undefined;
  readonly dpop: boolean;
  constructor(code: BearerErrorCode, description: string, scope?: string, options: BearerErrorOptions = {}) {
    super(description);
    this.code = code;
    this.status = code === 'invalid_request' ? 400 : code === 'insufficient_scope' ? 403 : 401;
    this.scope = scope;
    this.tokenMissing = options.tokenMissing ?? false;
    this.resourceMetadata = options.resourceMetadata;
    this.dpop = options.dpop ?? code === 'invalid_dpop_proof';
  }
  override get name(): string {
    return 'BearerError';
  }
  get wwwAuthenticate(): string {
    return bearerChallenge(this, this.resourceMetadata);
  }
}

// RFC 6750 §3: error_description and scope use only %x20-21 / %x23-5B / %x5D-7E, so nothing in them needs
// escaping; anything else is dropped. Other parameters (resource_metadata) are RFC 9110 §5.6.4 quoted-strings
// with `"` and `\` escaped; characters outside printable ASCII, which a header cannot carry safely, are dropped.
const rfc6750Value = (value: string) => `"${value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '')}"`;
const quotedString = (value: string) => `"${value.replace(/[^\x20-\x7e]/g, '').replace(/["\\]/g, '\\$&')}"`;

export function bearerChallenge(error: BearerError, resourceMetadata: string | undefined): string {
  const parts = error.tokenMissing ? [] : [`error="${error.code}"`, `error_description=${rfc6750Value(error.message)}`];
  if (error.scope) parts.push(`scope=${rfc6750Value(error.scope)}`);
  if (resourceMetadata) parts.push(`resource_metadata=${quotedString(resourceMetadata)}`);
  // RFC 9449 §7.1: the DPoP scheme's challenge names the algs it accepts.
  if (error.dpop) return `DPoP ${[...parts, `algs="${DPOP_ALGS.join(' ')}"`].join(', ')}`;
  return parts.length > 0 ? `Bearer ${parts.join(', ')}` : 'Bearer';
}
