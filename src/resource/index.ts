// For APIs that accept Tessera's access tokens: verify a JWT access token (RFC 9068) locally against
// the issuer's JWKS, and optionally ask the introspection endpoint (RFC 7662) whether it was revoked.
//
//   import { createVerifier } from 'tessera/resource';
//   const verify = createVerifier({ issuer: 'https://auth.example.com', audience: 'https://auth.example.com' });
//   const token = await verify(request.headers.authorization, { scopes: ['apps'] });
import { JWKS_MAX_AGE } from '../tokens/key-timeline.ts';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';

export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** An RFC 6750 §3.1 error: `status` and `wwwAuthenticate` are ready to send. */
export class BearerError extends Error {
  readonly code: BearerErrorCode;
  readonly status: 400 | 401 | 403;
  readonly scope: string | undefined;
  constructor(code: BearerErrorCode, description: string, scope?: string) {
    super(description);
    this.code = code;
    this.status = code === 'invalid_request' ? 400 : code === 'invalid_token' ? 401 : 403;
    this.scope = scope;
  }
  override get name(): string {
    return 'BearerError';
  }
  get wwwAuthenticate(): string {
    const parts = [`error="${this.code}"`, `error_description="${this.message.replace(/["\\]/g, '')}"`];
    if (this.scope) parts.push(`scope="${this.scope}"`);
    return `Bearer ${parts.join(', ')}`;
  }
}

export interface AccessToken extends JWTPayload {
  sub: string;
  client_id: string;
  scope: string;
  scopes: string[];
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
}

export type Verifier = (authorization: string | undefined, required?: { scopes?: string[] }) => Promise<AccessToken>;

function bearer(authorization: string | undefined): string {
  if (!authorization) throw new BearerError('invalid_token', 'an access token is required');
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization);
  if (!match) throw new BearerError('invalid_request', 'the Authorization header must carry a Bearer token');
  return match[1]!;
}

export function createVerifier(options: VerifierOptions): Verifier {
  const issuer = options.issuer.replace(/\/+$/, '');
  // jose caches the key set and refetches it when a token names an unknown kid (with a cooldown). It
  // keeps a copy no longer than the JWKS's Cache-Control max-age (300 s), which key rotation counts on
  // (src/tokens/key-timeline.ts); jose's own default is 10 minutes.
  const jwks = createRemoteJWKSet(new URL(options.jwksUri ?? `${issuer}/oauth2/jwks`), {
    cooldownDuration: options.jwksCooldown ?? 30_000,
    cacheMaxAge: JWKS_MAX_AGE * 1000,
  });
  return async (authorization, required = {}) => {
    const token = bearer(authorization);
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
      if (err instanceof joseErrors.JWTExpired) throw new BearerError('invalid_token', 'the access token has expired');
      if (err instanceof joseErrors.JOSEError) throw new BearerError('invalid_token', 'the access token is invalid');
      throw err;
    }
    if (options.introspection) await checkActive(issuer, token, options.introspection);
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter((s) => s !== '') : [];
    const missing = (required.scopes ?? []).filter((s) => !scopes.includes(s));
    if (missing.length > 0) {
      throw new BearerError(
        'insufficient_scope',
        `the access token lacks the scope ${missing.join(' ')}`,
        (required.scopes ?? []).join(' '),
      );
    }
    return { ...(payload as AccessToken), scopes };
  };
}

async function checkActive(
  issuer: string,
  token: string,
  introspection: NonNullable<VerifierOptions['introspection']>,
): Promise<void> {
  const credentials = `${encodeURIComponent(introspection.clientId)}:${encodeURIComponent(introspection.clientSecret)}`;
  const response = await fetch(introspection.endpoint ?? `${issuer}/oauth2/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
  });
  if (!response.ok) throw new Error(`introspection failed with HTTP ${response.status}`);
  const result = (await response.json()) as { active?: unknown };
  if (result.active !== true) throw new BearerError('invalid_token', 'the access token has been revoked');
}
