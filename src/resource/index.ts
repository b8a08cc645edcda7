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
export type { DpopReplay, DpopRequest } from './dpop.ts';
export {
  type AccessToken,
  createVerifier,
  IntrospectionError,
  type Verifier,
  type VerifierOptions,
} from './verifier.ts';
export { BearerError, type BearerErrorCode, type BearerErrorOptions } from './bearer-error.ts';
export {
  createProtectedResource,
  type ProtectedResource,
  type ProtectedResourceMetadata,
  type ProtectedResourceOptions,
} from './protected-resource.ts';
