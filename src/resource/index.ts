// For APIs that accept Tessera's access tokens: verify a JWT access token (RFC 9068) locally against
// the issuer's JWKS, and optionally ask the introspection endpoint (RFC 7662) whether it was revoked.
// createProtectedResource adds RFC 9728 metadata, so a client that meets the API's 401 can find out
// which authorization server to ask, for which resource (RFC 8707) and which scopes.
//
//   import { createVerifier, createProtectedResource } from '@tessera-oidc/server/resource';
//   const verify = createVerifier({ issuer: 'https://auth.example.com', audience: 'https://auth.example.com' });
//   const token = await verify(request.headers.authorization, { scopes: ['apps'] });
//
//   // DPoP-bound tokens (RFC 9449): the request's method, URL and DPoP header, checked with the token
//   await verify(request.headers.authorization, { dpop: { proof: request.headers.dpop, method: 'GET', url } });
//
//   const api = createProtectedResource({ issuer: 'https://auth.example.com', resource: 'https://api.example.com' });
//   // serve api.metadata at api.metadataPath; api.verify expects aud = the resource
import { JWKS_MAX_AGE } from '../tokens/key-timeline.ts';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { DPOP_ALGS } from '../tokens/dpop-proof.ts';
import { dpopRefusal, type DpopReplay, type DpopRequest, memoryReplay } from './dpop.ts';

export type { DpopReplay, DpopRequest } from './dpop.ts';

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

function bearerChallenge(error: BearerError, resourceMetadata: string | undefined): string {
  const parts = error.tokenMissing ? [] : [`error="${error.code}"`, `error_description=${rfc6750Value(error.message)}`];
  if (error.scope) parts.push(`scope=${rfc6750Value(error.scope)}`);
  if (resourceMetadata) parts.push(`resource_metadata=${quotedString(resourceMetadata)}`);
  // RFC 9449 §7.1: the DPoP scheme's challenge names the algs it accepts.
  if (error.dpop) return `DPoP ${[...parts, `algs="${DPOP_ALGS.join(' ')}"`].join(', ')}`;
  return parts.length > 0 ? `Bearer ${parts.join(', ')}` : 'Bearer';
}

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

export interface ProtectedResourceOptions extends Omit<VerifierOptions, 'audience' | 'resourceMetadata'> {
  /**
   * This API's resource identifier, as registered at Tessera (RFC 8707 §2, RFC 9728 §1.2): an https URL, or
   * http on a loopback host (127.0.0.1, [::1], localhost) for development; no query, no fragment. It is used
   * as given: the metadata's `resource` and the default audience must equal the `resource=` clients send.
   */
  resource: string;
  /** scopes_supported: the scopes this API accepts. */
  scopes?: string[];
  /** resource_name: the API's name, for people. */
  resourceName?: string;
  /** The `aud` to expect; default the resource, the `aud` of tokens issued for `resource=` this API. */
  audience?: string;
  /** The API accepts DPoP-bound tokens (it passes `dpop` to verify): the metadata names the proofs' algs. */
  dpop?: boolean;
}

/** RFC 9728 §2. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
  bearer_methods_supported: string[];
  dpop_signing_alg_values_supported?: string[];
  resource_name?: string;
}

export interface ProtectedResource {
  /** The metadata document, to serve as JSON at `metadataPath`. */
  metadata: ProtectedResourceMetadata;
  /** RFC 9728 §3.1: `/.well-known/oauth-protected-resource` followed by the resource's path, if any. */
  metadataPath: string;
  /** The resource's origin followed by `metadataPath`: the `resource_metadata` of every challenge. */
  metadataUrl: string;
  /** A verifier expecting `audience`; its errors' `wwwAuthenticate` carry `resource_metadata`. */
  verify: Verifier;
  /** The WWW-Authenticate value for `error` with `resource_metadata`; without one, for a request without a token. */
  challenge(error?: BearerError): string;
}

const METADATA_PREFIX = '/.well-known/oauth-protected-resource';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** An API described by RFC 9728 metadata, so clients can find which authorization server to ask and for what. */
export function createProtectedResource(options: ProtectedResourceOptions): ProtectedResource {
  const { resource, scopes, resourceName, audience, dpop, ...verifierOptions } = options;
  const url = resourceIdentifier(resource);
  // RFC 9728 §3.1: the well-known string goes between the host and the path; a path of just `/` adds nothing.
  const metadataPath = METADATA_PREFIX + (url.pathname === '/' ? '' : url.pathname);
  const metadataUrl = url.origin + metadataPath;
  const metadata: ProtectedResourceMetadata = Object.freeze({
    resource,
    authorization_servers: [options.issuer.replace(/\/+$/, '')],
    ...(scopes ? { scopes_supported: [...scopes] } : {}),
    // The verifier reads the Authorization header only (RFC 6750 §2.1).
    bearer_methods_supported: ['header'],
    // RFC 9449 §7.1: DPoP-bound tokens too, when the API passes its requests to verify.
    ...(dpop ? { dpop_signing_alg_values_supported: [...DPOP_ALGS] } : {}),
    ...(resourceName ? { resource_name: resourceName } : {}),
  });
  const verify = createVerifier({ ...verifierOptions, audience: audience ?? resource, resourceMetadata: metadataUrl });
  const missing = new BearerError('invalid_token', 'an access token is required', undefined, { tokenMissing: true });
  return {
    metadata,
    metadataPath,
    metadataUrl,
    verify,
    challenge: (error = missing) => bearerChallenge(error, metadataUrl),
  };
}

function resourceIdentifier(resource: string): URL {
  if (!URL.canParse(resource)) throw new TypeError(`resource must be an absolute URL: ${resource}`);
  const url = new URL(resource);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new TypeError(`resource must be an https URL (http only on a loopback host): ${resource}`);
  }
  // RFC 8707 §2: no fragment, and a query is discouraged; the metadata is served by path alone.
  if (resource.includes('#') || resource.includes('?')) {
    throw new TypeError(`resource must have no query or fragment: ${resource}`);
  }
  if (url.username || url.password) throw new TypeError(`resource must carry no credentials: ${resource}`);
  return url;
}
