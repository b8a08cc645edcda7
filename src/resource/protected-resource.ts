// RFC 9728 protected resource metadata for an API that accepts Tessera's access tokens: the document
// a client finds after a 401, and a verifier whose challenges name it.
import { DPOP_ALGS } from '../tokens/dpop-proof.ts';
import { BearerError, bearerChallenge } from './bearer-error.ts';
import { createVerifier, type Verifier, type VerifierOptions } from './verifier.ts';

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
