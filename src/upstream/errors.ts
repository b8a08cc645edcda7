// What went wrong with an upstream provider, in words a person can act on and a reason the metrics
// and the audit trail count by; the operator's detail (the library's error, the address refused) is
// logged, never shown.
import * as client from 'openid-client';
import { OutboundError } from '../net/outbound.ts';

export type UpstreamFailureReason =
  /** No answer in time, a refused connection, a broken TLS handshake. */
  | 'unavailable'
  /** The provider answered with an OAuth error: the person cancelled, or it refused the request. */
  | 'provider_error'
  /** An answer that fails a check: an ID token's signature, issuer, audience, nonce or expiry, bad JSON. */
  | 'invalid_response'
  /** The provider cannot be used as configured: an address not allowed, a secret that does not decrypt. */
  | 'misconfigured';

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly reason: UpstreamFailureReason;
  /** The provider's own error code (RFC 6749 §4.1.2.1, §5.2), when it sent one. */
  readonly providerError: string | undefined;
  constructor(reason: UpstreamFailureReason, message: string, options?: ErrorOptions & { providerError?: string }) {
    super(message, options);
    this.reason = reason;
    this.providerError = options?.providerError;
  }
}

function outboundCause(err: unknown): OutboundError | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    if (cause instanceof OutboundError) return cause;
  }
  return undefined;
}

/** The provider's `error` value: a token (RFC 6749 §A.7), or nothing worth repeating. */
function errorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value) ? value : undefined;
}

/** Any error of a step with a provider as an UpstreamError. */
export function asUpstreamError(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const outbound = outboundCause(err);
  if (outbound) {
    const reason = outbound.reason === 'address' || outbound.reason === 'scheme' ? 'misconfigured' : 'unavailable';
    return new UpstreamError(
      outbound.reason === 'redirect' || outbound.reason === 'too_large' ? 'invalid_response' : reason,
      outbound.message,
      { cause: err },
    );
  }
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    const providerError = errorCode(err.error);
    return new UpstreamError('provider_error', err.message, {
      cause: err,
      ...(providerError ? { providerError } : {}),
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new UpstreamError('invalid_response', message, { cause: err });
}
