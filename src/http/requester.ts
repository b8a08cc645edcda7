// Who sent a request, for the audit trail (src/events) and the throttles: the client's address
// (Fastify's request.ip, which follows X-Forwarded-For only from TESSERA_TRUST_PROXY's peers), its
// user agent, on a browser route its page's language (what a security notification speaks), and the
// request's id (Fastify's `request.id`, already made for its log lines: nothing new to compute).
import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import type { Requester } from '../events/index.ts';
import { pageLocaleOf } from './pages.ts';

/**
 * The client's address: the forwarded one when it is an IP address, else the peer's. A trusted proxy
 * passes on whatever the client wrote in X-Forwarded-For (`<script>`, `not-an-ip`); that is no address
 * to record or to count failures under.
 */
export function clientAddress(request: FastifyRequest): string | null {
  const ip = request.ip;
  if (isIP(ip) !== 0) return ip;
  return request.socket.remoteAddress ?? null;
}

export function requesterOf(request: FastifyRequest): Requester {
  return {
    ip: clientAddress(request),
    userAgent: request.headers['user-agent'] ?? null,
    locale: pageLocaleOf(request),
    requestId: request.id,
  };
}
