// The operations listener (TESSERA_METRICS_PORT, by default on 127.0.0.1 in production): what is for
// the people and tools running Tessera, kept off the public listener. /metrics for Prometheus, and
// the admin API (TESSERA_ADMIN_API=operations, the default; docs/admin-api.md).
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config/index.ts';
import type { AdminApiDeps } from './admin-api/context.ts';
import { registerAdminApi } from './admin-api/index.ts';
import { metricsAllowed } from './plugins/metrics.ts';
import { fastifyTrustProxy, requestIdGenerator, REQUEST_ID_HEADER } from './request-id.ts';

export interface OperationsDeps {
  config: Config;
  registry: Registry;
  /** The admin API's dependencies, when it is served here. */
  adminApi?: AdminApiDeps | undefined;
  logger?: FastifyBaseLogger | undefined;
}

/** Whether the admin API is served on the operations listener: asked for, and there is one. */
export function adminApiOnOperations(config: Pick<Config, 'adminApi' | 'metrics'>): boolean {
  return config.adminApi === 'operations' && config.metrics.port !== null;
}

export async function buildOperationsApp(deps: OperationsDeps): Promise<FastifyInstance> {
  const { config, registry } = deps;
  const app: FastifyInstance = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: 64 * 1024,
    genReqId: requestIdGenerator(config.trustProxy),
    trustProxy: fastifyTrustProxy(config.trustProxy),
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
  });
  // /metrics asks TESSERA_METRICS_TOKEN when one is set: it tells the runtime's version and per-route counts.
  // A scrape every few seconds is not worth two log lines each: its requests log warnings only.
  app.get('/metrics', { logLevel: 'warn' }, async (request, reply) => {
    if (!metricsAllowed(config.metrics.token, request.headers.authorization))
      return reply.code(401).header('www-authenticate', 'Bearer realm="tessera metrics"').send();
    return reply.header('content-type', registry.contentType).send(await registry.metrics());
  });
  if (deps.adminApi) await registerAdminApi(app, deps.adminApi);
  return app;
}
