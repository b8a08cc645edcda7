// The admin API's one error handler: every error as RFC 9457 problem details
// (`application/problem+json` with `type`, `title`, `status`, `detail`), never an HTML page nor
// OAuth's `error` body. The `type`s are Tessera's own URNs, listed in docs/admin-api.md.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, ConflictError, NotFoundError } from '../../admin/errors.ts';
import { UpstreamCheckError } from '../../admin/providers.ts';
import { ProviderInputError } from '../../upstream/providers.ts';
import { OAuthError } from '../../errors/index.ts';
import { DatabaseUnavailable } from '../../store/faults.ts';
import { WebhookInputError } from '../../webhooks/subscriptions.ts';
import { logRejection } from '../rejections.ts';

export type ProblemType =
  | 'invalid-request'
  | 'unauthorized'
  | 'insufficient-scope'
  | 'not-found'
  | 'conflict'
  | 'precondition-failed'
  | 'unsupported-media-type'
  | 'upstream-failed'
  | 'unavailable'
  | 'server-error';

export const PROBLEM_TYPE_PREFIX = 'urn:tessera:admin-api:problem:';

/** An answer other than success, thrown by a route and sent by problemHandler. */
export class Problem extends Error {
  override name = 'Problem';
  readonly status: number;
  readonly type: ProblemType;
  constructor(status: number, type: ProblemType, detail: string) {
    super(detail);
    this.status = status;
    this.type = type;
  }
}

/** The JSON Schema of a problem details object, for every route's error responses. */
export const PROBLEM_SCHEMA = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', description: `a URN: ${PROBLEM_TYPE_PREFIX}<name> (docs/admin-api.md)` },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
  },
} as const;

/** Seconds a caller is asked to wait when the database is unavailable (RFC 9110 §10.2.3). */
const RETRY_AFTER = 5;

function toProblem(err: FastifyError | Error): Problem {
  if (err instanceof Problem) return err;
  if (err instanceof NotFoundError) return new Problem(404, 'not-found', err.message);
  if (err instanceof ConflictError) return new Problem(409, 'conflict', err.message);
  if (err instanceof AdminError) return new Problem(400, 'invalid-request', err.message);
  if (err instanceof ProviderInputError) return new Problem(400, 'invalid-request', err.message);
  if (err instanceof UpstreamCheckError) return new Problem(502, 'upstream-failed', err.message);
  if (err instanceof WebhookInputError) {
    const named = err.unknownTypes.length > 0 ? `: ${err.unknownTypes.join(', ')}` : '';
    return new Problem(400, 'invalid-request', `${err.message}${named}`);
  }
  if (err instanceof DatabaseUnavailable)
    return new Problem(503, 'unavailable', 'the database is unavailable; try again');
  if (err instanceof OAuthError && err.error === 'invalid_token') return new Problem(401, 'unauthorized', err.message);
  if (err instanceof OAuthError && err.error === 'insufficient_scope')
    return new Problem(403, 'insufficient-scope', err.message);
  const fastify = err as FastifyError;
  if (fastify.validation) return new Problem(400, 'invalid-request', err.message);
  if (fastify.statusCode === 415) return new Problem(415, 'unsupported-media-type', err.message);
  if (typeof fastify.statusCode === 'number' && fastify.statusCode >= 400 && fastify.statusCode < 500)
    return new Problem(fastify.statusCode === 413 ? 413 : 400, 'invalid-request', err.message);
  return new Problem(500, 'server-error', 'the server encountered an unexpected condition');
}

/** RFC 6750 §3: the challenge of a 401 (no error code when no token came) and of a 403. */
function challenge(problem: Problem, request: FastifyRequest): string | undefined {
  if (problem.type === 'unauthorized') {
    if (request.headers.authorization === undefined) return 'Bearer realm="tessera admin"';
    return `Bearer realm="tessera admin", error="invalid_token"`;
  }
  if (problem.type === 'insufficient-scope')
    return 'Bearer realm="tessera admin", error="insufficient_scope", scope="admin"';
  return undefined;
}

export function problemHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(err);
  if (problem.status === 503) {
    reply.header('retry-after', String(RETRY_AFTER));
    request.log.warn({ err }, 'admin API request failed: database unavailable');
  } else if (problem.status >= 500) request.log.error({ err }, 'admin API request failed');
  else logRejection(request, { error: problem.type, description: problem.message });
  const www = challenge(problem, request);
  if (www) reply.header('www-authenticate', www);
  sendProblem(reply, problem);
}

export function sendProblem(reply: FastifyReply, problem: Problem): void {
  const body = {
    type: `${PROBLEM_TYPE_PREFIX}${problem.type}`,
    title: STATUS_CODES[problem.status] ?? 'Error',
    status: problem.status,
    detail: problem.message,
  };
  void reply
    .code(problem.status)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(JSON.stringify(body));
}
