// Discovery metadata, the JWKS, and health endpoints.
import type { FastifyInstance } from 'fastify';
import { discoveryMetadata } from '../../oidc/discovery.ts';
import { JWKS_MAX_AGE } from '../../tokens/key-timeline.ts';
import type { RouteContext } from '../context.ts';

export function metadataRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const metadata = JSON.stringify(discoveryMetadata(ctx.config));
  const sendMetadata = async (_: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .send(metadata);
  app.get('/.well-known/openid-configuration', sendMetadata);
  app.get('/.well-known/oauth-authorization-server', sendMetadata);
  app.get('/oauth2/jwks', async (_, reply) =>
    reply
      .header('content-type', 'application/jwk-set+json')
      .header('access-control-allow-origin', '*')
      .header('cache-control', `public, max-age=${JWKS_MAX_AGE}`)
      .send(ctx.keys.jwks()),
  );
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_, reply) => {
    // Draining after SIGTERM: not ready, whatever the database says.
    if (ctx.lifecycle.draining) return reply.code(503).send({ status: 'draining' });
    try {
      await ctx.store.ping();
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
