// POST /oauth2/par (RFC 9126), form-encoded: 201 with the request_uri; errors as the token endpoint's.
import type { FastifyInstance } from 'fastify';
import { pushAuthorizationRequest } from '../../oauth/par.ts';
import { clientGuard } from '../client-guard.ts';
import type { RouteContext } from '../context.ts';
import { formParams } from '../forms.ts';

export function parRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const path = '/oauth2/par';
  const guard = clientGuard(ctx, path);
  const deps = { config: ctx.config, store: ctx.store, requestObjects: ctx.requestObjects };
  app.post(path, async (request, reply) => {
    const now = ctx.now();
    const params = formParams(request);
    const proof = request.headers.dpop;
    const dpopJkt = proof === undefined ? undefined : await ctx.dpop.check(proof, { method: 'POST', path, now });
    const pushed = await pushAuthorizationRequest(
      deps,
      request.headers.authorization,
      params,
      now,
      guard(request, now),
      dpopJkt,
    );
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(pushed);
  });
}
