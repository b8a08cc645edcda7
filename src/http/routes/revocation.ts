// POST /oauth2/revoke (RFC 7009) and POST /oauth2/introspect (RFC 7662), form-encoded.
import type { FastifyInstance } from 'fastify';
import { introspect } from '../../oauth/introspect.ts';
import { revoke } from '../../oauth/revoke.ts';
import type { RouteContext } from '../context.ts';
import { formParams } from '../forms.ts';
import { requesterOf } from '../requester.ts';
import { clientGuard } from '../client-guard.ts';
import { allowOrigin, namedClient } from '../plugins/cors.ts';
import { originAllowedFor } from '../../oauth/origins.ts';

export function revocationRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const revocationGuard = clientGuard(ctx, '/oauth2/revoke');
  const introspectionGuard = clientGuard(ctx, '/oauth2/introspect');
  app.post('/oauth2/revoke', async (request, reply) => {
    const now = ctx.now();
    const guard = revocationGuard(request, now);
    const origin = request.headers.origin;
    if (origin !== undefined && (await originAllowedFor(ctx.store, namedClient(request), origin))) {
      allowOrigin(reply, origin);
    }
    const params = formParams(request);
    await revoke(ctx, request.headers.authorization, params, now, requesterOf(request), guard, origin);
    return reply.header('cache-control', 'no-store').code(200).send();
  });
  app.post('/oauth2/introspect', async (request, reply) => {
    const now = ctx.now();
    const guard = introspectionGuard(request, now);
    const result = await introspect(ctx, request.headers.authorization, formParams(request), now, guard);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(result);
  });
}
