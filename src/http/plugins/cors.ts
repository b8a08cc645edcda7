// CORS (Fetch standard) for apps in the browser: discovery and the JWKS for every origin; the token,
// userinfo and revocation endpoints for each client's allowed origins (src/oauth/origins.ts), with
// `Vary: Origin`, and never with credentials (cookies): these endpoints take tokens, not cookies.
// Only a request with an Origin header does any of this work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBasicCredentials } from '../../oauth/client-auth/index.ts';

export const PUBLIC_CORS_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/oauth2/jwks',
];
export const CLIENT_CORS_PATHS = ['/oauth2/token', '/oauth2/userinfo', '/oauth2/revoke'];

/** Lets `origin` read this answer. */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply
    .header('access-control-allow-origin', origin)
    .header('vary', 'Origin')
    // What a browser app needs to read beyond the body: a bearer error's challenge, a throttle's wait,
    // a DPoP nonce (RFC 9449 §8).
    .header('access-control-expose-headers', 'WWW-Authenticate, Retry-After, DPoP-Nonce');
}

/** The client a token or revocation request names (HTTP Basic or the body), before it is authenticated. */
export function namedClient(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header && /^Basic /i.test(header)) {
    try {
      return parseBasicCredentials(header).clientId;
    } catch {
      return undefined;
    }
  }
  return request.body instanceof URLSearchParams ? (request.body.get('client_id') ?? undefined) : undefined;
}

/**
 * Preflights. A preflight carries no client, so it is answered for any origin: whether the answer to
 * the request itself is readable is decided then, for its client, and a token or revocation request
 * from an origin its client does not allow is refused outright.
 */
export function registerCors(app: FastifyInstance): void {
  for (const path of [...PUBLIC_CORS_PATHS, ...CLIENT_CORS_PATHS]) {
    app.options(path, async (request, reply) => {
      const origin = request.headers.origin;
      if (origin === undefined) return reply.code(204).send();
      return reply
        .code(204)
        .header('access-control-allow-origin', PUBLIC_CORS_PATHS.includes(path) ? '*' : origin)
        .header('access-control-allow-methods', CLIENT_CORS_PATHS.includes(path) ? 'GET, POST' : 'GET')
        .header('access-control-allow-headers', 'authorization, content-type, dpop')
        .header('access-control-max-age', '600')
        .header('vary', 'Origin')
        .send();
    });
  }
}
