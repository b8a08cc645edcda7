// POST /oauth2/par (RFC 9126), form-encoded: 201 with the request_uri; errors as the token endpoint's.
import type { FastifyInstance } from 'fastify';
import { pushAuthorizationRequest } from '../../oauth/par.ts';
import { clientGuard } from '../client-guard.ts';
import type { RouteContext } from '../context.ts';
import { formParams } from '../forms.ts';

export function parRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const guard = clientGuard(ctx, '/oauth2/par');
  const deps = { config: ctx.config, store: ctx.store, requestObjects: ctx.requestObjects };
  app.post('/oauth2/par', async (request, reply) => {
    const now = ctx.now();
    const params = formParams(request);
    const pushed = await pushAuthorizationRequest(
      deps,
      request.headers.authorization,
      params,
      now,
      guard(request, now),
    );
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(pushed);
  });
}
