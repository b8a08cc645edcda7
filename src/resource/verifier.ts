// Verifies a JWT access token of Tessera's (RFC 9068) locally against the issuer's JWKS, and optionally
// asks the introspection endpoint (RFC 7662) whether it was revoked; DPoP-bound tokens with their proof.
import { JWKS_MAX_AGE } from '../tokens/key-timeline.ts';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { dpopRefusal, type DpopReplay, type DpopRequest, memoryReplay } from './dpop.ts';

import { BearerError, type BearerErrorCode } from './bearer-error.ts';

export interface AccessToken extends JWTPayload {
  sub: string;
  client_id: string;
  scope: string;
  scopes: string[];
  /**
   * The user's roles, from a token issued with the `roles` scope (only those the client may see);
   * empty without the scope, for a user without roles, and for a client's own token.
   */
  roles: string[];
}

export interface VerifierOptions {
  issuer: string;
  /** The `aud` this API expects (Tessera's TESSERA_ACCESS_TOKEN_AUDIENCE; default the issuer). */
  audience: string;
  /** Defaults to `${issuer}/oauth2/jwks`. */
  jwksUri?: string;
  /** Ask introspection on every call, so revoked tokens are refused before they expire. */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string };
  /** Allowed clock skew, seconds. */
  clockTolerance?: number;
  /** Least time between two JWKS fetches, ms (a token with an unknown kid triggers one); default 30 s. */
  jwksCooldown?: number;
  /** The URL of this API's RFC 9728 metadata, named in every error's challenge (createProtectedResource sets it). */
  resourceMetadata?: string;
  /**
   * Records a DPoP proof's `jti` (with its key) as used until `expiresAt` (epoch seconds): true the
   * first time, false when used before (RFC 9449 §11.1). Default: in this process's memory; an API
   * on several instances passes one that writes to storage they share.
   */
  dpopReplay?: DpopReplay;
}

/**
 * `dpop`: the request's DPoP header, method and URL; without it the DPoP scheme is not accepted (the
 * challenge asks for a Bearer token) and a DPoP-bound token is refused.
 */
export type Verifier = (
  authorization: string | undefined,
  required?: { scopes?: string[]; dpop?: DpopRequest },
) => Promise<AccessToken>;

export function createVerifier(options: VerifierOptions): Verifier {
  const issuer = options.issuer.replace(/\/+$/, '');
  const { resourceMetadata } = options;
  // jose caches the key set and refetches it when a token names an unknown kid (with a cooldown). It
  // keeps a copy no longer than the JWKS's Cache-Control max-age (300 s), which key rotation counts on
  // (src/tokens/key-timeline.ts); jose's own default is 10 minutes.
  const jwks = createRemoteJWKSet(new URL(options.jwksUri ?? `${issuer}/oauth2/jwks`), {
    cooldownDuration: options.jwksCooldown ?? 30_000,
    cacheMaxAge: JWKS_MAX_AGE * 1000,
  });
  const replay = options.dpopReplay ?? memoryReplay();
  return async (authorization, required = {}) => {
    const requiredScope = (required.scopes ?? []).join(' ') || undefined;
    // RFC 9449 §7.1: the DPoP scheme, accepted when the caller passes the request it came with.
    const scheme = /^(Bearer|DPoP)(?: |$)/i.exec(authorization ?? '')?.[1]?.toLowerCase();
    const dpop = scheme === 'dpop';
    const fail = (code: BearerErrorCode, description: string, scope?: string, bound = false) =>
      new BearerError(code, description, scope, { resourceMetadata, dpop: dpop || bound });
    // RFC 6750 §3.1: a request with no authentication, or with an unsupported method (another scheme), gets
    // a challenge without an error code; the scope a route needs tells the client what to ask for.
    if (!authorization || scheme === undefined || (dpop && required.dpop === undefined)) {
      throw new BearerError('invalid_token', 'an access token is required', requiredScope, {
        tokenMissing: true,
        resourceMetadata,
      });
    }
    // RFC 6750 §2.1: b64token (RFC 9449 §7.1: token68, the same characters).
    const match = /^(?:Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization);
    if (!match) throw fail('invalid_request', `the Authorization header must carry a ${scheme} token`);
    const token = match[1]!;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer,
        audience: options.audience,
        typ: 'at+jwt',
        algorithms: ['RS256', 'ES256'],
        requiredClaims: ['sub', 'exp', 'iat', 'client_id', 'scope'],
        clockTolerance: options.clockTolerance ?? 0,
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw fail('invalid_token', 'the access token has expired');
      if (err instanceof joseErrors.JOSEError) throw fail('invalid_token', 'the access token is invalid');
      throw err;
    }
    const refusal = await dpopRefusal(token, payload, dpop ? required.dpop : undefined, replay);
    if (refusal) throw fail(refusal[0], refusal[1], undefined, true);
    if (options.introspection && !(await isActive(issuer, token, options.introspection))) {
      throw fail('invalid_token', 'the access token has been revoked');
    }
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => s !== '') : [];
    const missing = (required.scopes ?? []).filter((s) => !scopes.includes(s));
    if (missing.length > 0) {
      throw fail('insufficient_scope', `the access token lacks the scope ${missing.join(' ')}`, requiredScope);
    }
    const roles = Array.isArray(payload.roles) ? payload.roles.filter((r) => typeof r === 'string') : [];
    return { ...(payload as AccessToken), scopes, roles };
  };
}

/**
 * Introspection could not answer (wrong credentials, Tessera unreachable): a fault of the API's
 * setup or of a dependency, not of the request; answer 503 and log `message`, which says why.
 */
export class IntrospectionError extends Error {
  override get name(): string {
    return 'IntrospectionError';
  }
}

async function isActive(
  issuer: string,
  token: string,
  introspection: NonNullable<VerifierOptions['introspection']>,
): Promise<boolean> {
  const credentials = `${encodeURIComponent(introspection.clientId)}:${encodeURIComponent(introspection.clientSecret)}`;
  const endpoint = introspection.endpoint ?? `${issuer}/oauth2/introspect`;
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
    });
  } catch (err) {
    throw new IntrospectionError(`introspection at ${endpoint} could not be reached: ${(err as Error).message}`);
  }
  if (response.status === 401) {
    throw new IntrospectionError(
      `introspection at ${endpoint} refused the API's client credentials (HTTP 401): check its client id and secret`,
    );
  }
  if (!response.ok) throw new IntrospectionError(`introspection at ${endpoint} failed with HTTP ${response.status}`);
  const result = (await response.json()) as { active?: unknown };
  return result.active === true;
}
