// POST /oauth2/token (RFC 6749 §3.2), form-encoded; every answer carries Cache-Control: no-store.
import type { FastifyInstance } from 'fastify';
import { InvalidRequest } from '../../errors/index.ts';
import { paramsFrom } from '../../oauth/params.ts';
import { tokenEndpoint } from '../../oauth/token.ts';
import type { RouteContext } from '../context.ts';

export function tokenRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post('/oauth2/token', async (request, reply) => {
    if (!(request.body instanceof URLSearchParams)) {
      throw new InvalidRequest('the request body must be application/x-www-form-urlencoded');
    }
    const response = await tokenEndpoint(
      { config: ctx.config, store: ctx.store, keys: ctx.keys, now: ctx.now() },
      request.headers.authorization,
      paramsFrom(request.body),
    );
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(response);
  });
}
