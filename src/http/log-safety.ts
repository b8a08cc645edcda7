// What the logs may say of a request: its method, its path, and its query with every value that is
// a credential or carries one replaced, by the parameter's name (an authorization code, a PKCE
// verifier, an ID token hint, a token, a client secret, a password, a sealed interaction, sign-out
// request or upstream link). Headers (Authorization, Cookie) and bodies are never logged.
import type { FastifyRequest } from 'fastify';

const SECRET_PARAMETERS = new Set([
  'code',
  'code_verifier',
  'id_token_hint',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'password',
  'interaction',
  // A sealed link of a sign-in through an upstream provider (src/upstream/flow.ts).
  'link',
  'logout',
  'csrf',
  'client_assertion',
  'request',
]);

/** The URL with the values of credential parameters replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const query = new URLSearchParams(url.slice(question + 1));
  let redacted = false;
  for (const name of new Set(query.keys())) {
    if (SECRET_PARAMETERS.has(name.toLowerCase())) {
      query.set(name, '[redacted]');
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, question)}?${query}` : url;
}

/** Fastify's request serializer, with the URL redacted. */
export function requestForLog(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
