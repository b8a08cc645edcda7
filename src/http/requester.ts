// Who sent a request, for the audit trail (src/events): the client's address (Fastify's request.ip,
// which follows X-Forwarded-For only from TESSERA_TRUST_PROXY's peers) and its user agent.
import type { FastifyRequest } from 'fastify';
import type { Requester } from '../events/index.ts';

export function requesterOf(request: FastifyRequest): Requester {
  return { ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
}
