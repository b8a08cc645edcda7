// What the endpoints that authenticate clients (token, pushed requests, revocation, introspection)
// hand to src/oauth/client-auth: this instance's throttle, the source address, the time, and what
// checks client assertions with the endpoint's own URL (an `aud` accepted beside the issuer's),
// made once per route so that a request with a secret costs nothing more.
import type { FastifyRequest } from 'fastify';
import type { AssertionCheck } from '../oauth/client-auth/assertion.ts';
import type { ClientAuthGuard } from '../oauth/client-auth/throttle.ts';
import type { RouteContext } from './context.ts';
import { clientAddress } from './requester.ts';

/** The guard maker of the endpoint at `path`. */
export function clientGuard(ctx: RouteContext, path: string) {
  const assertion: AssertionCheck = { assertions: ctx.clientAssertions, endpoint: `${ctx.config.issuer}${path}` };
  return (request: FastifyRequest, now: number): ClientAuthGuard => ({
    throttle: ctx.clientThrottle,
    ip: clientAddress(request),
    now,
    assertion,
  });
}
