// The single place that turns errors into responses: RFC 6749 §5.2 JSON for the API routes,
// RFC 6750 §3 WWW-Authenticate for bearer-token routes, an HTML page for the browser routes.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DpopBoundToken, OAuthError, TooManyAttempts, UseDpopNonce } from '../../errors/index.ts';
import { DPOP_ALGS } from '../../tokens/dpop-proof.ts';
import { DatabaseUnavailable } from '../../store/faults.ts';
import { errorPage } from '../../ui/pages.ts';
import { errorWords } from '../outcome.ts';
import { pageContext } from '../pages.ts';
import { sendHtml } from './html.ts';
import { logRejection } from '../rejections.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Errors of this route render an HTML page instead of JSON. */
    html?: boolean;
    /** Errors of this route are bearer-token errors (RFC 6750 §3). */
    bearer?: boolean;
    /** The route takes DPoP-bound tokens too (RFC 9449 §7.1): a DPoP request's errors carry its challenge. */
    dpop?: boolean;
  }
}

function quoted(value: string): string {
  return value.replace(/["\\]/g, '');
}

/** Seconds a client is asked to wait when the database is unavailable (RFC 9110 §10.2.3). */
const RETRY_AFTER = 5;

function toOAuthError(err: FastifyError | Error): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof DatabaseUnavailable) {
    // A fault of the database, not of the request (RFC 6749 §4.1.2.1's temporarily_unavailable,
    // with 503 everywhere): the client may send the same request again.
    return new OAuthError(
      'temporarily_unavailable',
      'the service is temporarily unavailable; try again shortly',
      503,
      err.message,
    );
  }
  const status = (err as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Fastify's own client errors: unsupported media type, body too large, malformed body.
    return new OAuthError('invalid_request', err.message, status === 415 || status === 413 ? status : 400);
  }
  return new OAuthError('server_error', 'the server encountered an unexpected condition', 500);
}

export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const oauthError = toOAuthError(err);
  if (oauthError instanceof TooManyAttempts) reply.header('retry-after', String(oauthError.retryAfter));
  if (oauthError.status === 503) {
    reply.header('retry-after', String(RETRY_AFTER));
    request.log.warn({ error: oauthError.error, detail: oauthError.detail }, 'request failed: database unavailable');
  } else if (oauthError.status >= 500) request.log.error({ err }, 'request failed');
  else logRejection(request, { error: oauthError.error, description: oauthError.message, detail: oauthError.detail });

  if (request.routeOptions.config?.html) {
    const { error, message: description } = oauthError;
    const page = { title: { key: 'error.generic.title' }, says: errorWords(error), error, description } as const;
    sendHtml(reply.code(oauthError.status), errorPage(pageContext(request, reply), page));
    return;
  }
  const bearer = request.routeOptions.config?.bearer && oauthError.status < 500;
  if (oauthError instanceof UseDpopNonce) reply.header('dpop-nonce', oauthError.nonce);
  // RFC 9449 §7.1: at a protected resource a proof's errors are 401, with the DPoP scheme's challenge.
  const dpop = oauthError.error === 'invalid_dpop_proof' || oauthError.error === 'use_dpop_nonce';
  const status = bearer && dpop ? 401 : oauthError.status;
  reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  const dpopScheme = request.routeOptions.config?.dpop && /^DPoP /i.test(request.headers.authorization ?? '');
  if (bearer && (dpop || dpopScheme || oauthError instanceof DpopBoundToken)) {
    const algs = DPOP_ALGS.join(' ');
    const description = quoted(oauthError.message);
    reply.header(
      'www-authenticate',
      `DPoP realm="tessera", error="${oauthError.error}", error_description="${description}", algs="${algs}"`,
    );
  } else if (bearer || oauthError.error === 'invalid_token' || oauthError.error === 'insufficient_scope') {
    reply.header(
      'www-authenticate',
      `Bearer realm="tessera", error="${oauthError.error}", error_description="${quoted(oauthError.message)}"`,
    );
  } else if (oauthError.error === 'invalid_client') {
    reply.header('www-authenticate', 'Basic realm="tessera"');
  }
  void reply.send({ error: oauthError.error, error_description: oauthError.message });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .header('cache-control', 'no-store')
      .send({ error: 'not_found', error_description: `no route for ${request.method} ${request.url.split('?')[0]}` });
  });
}
