// GET /metrics: Prometheus exposition of request counts and latencies per route, the database's
// connections and faults, readiness, the signing keys' age, plus process metrics.
import type { FastifyInstance } from 'fastify';
import { hashToken, safeEqual } from '../../tokens/opaque.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Lifecycle } from '../../lifecycle.ts';
import { refusalReason } from '../../authn/failures.ts';
import type { ThrottleObserver } from '../../authn/throttle.ts';
import type { Store } from '../../store/store.ts';
import type { KeyStore } from '../../tokens/keystore.ts';

export function registerMetrics(
  app: FastifyInstance,
  store: Pick<Store, 'stats' | 'ping'>,
  lifecycle: Lifecycle,
  keys: Pick<KeyStore, 'states' | 'now'>,
  options: { onPublicListener: boolean; token: string | null } = { onPublicListener: true, token: null },
): { registry: Registry; security: ThrottleObserver } {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  const requests = new Counter({
    name: 'tessera_http_requests_total',
    help: 'HTTP requests by route, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'tessera_database_connections',
    help: 'Database connections: open, in use, and callers waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { open, inUse, waiting } = store.stats();
      this.set({ state: 'open' }, open);
      this.set({ state: 'in_use' }, inUse);
      this.set({ state: 'waiting' }, waiting);
    },
  });
  new Gauge({
    name: 'tessera_ready',
    help: 'What /readyz says: 1 when serving and the database answers, 0 when draining or the database is down',
    registers: [registry],
    async collect() {
      const up =
        !lifecycle.draining &&
        (await store.ping().then(
          () => true,
          () => false,
        ));
      this.set(up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tessera_signing_key_age_seconds',
    help: 'Seconds since the active signing key of each algorithm began to sign',
    labelNames: ['alg'] as const,
    registers: [registry],
    collect() {
      const now = keys.now();
      for (const key of keys.states()) if (key.state === 'active') this.set({ alg: key.alg }, now - key.activatesAt);
    },
  });
  let faultsSeen = 0;
  new Counter({
    name: 'tessera_database_faults_total',
    help: 'Database faults: connections lost, server unreachable, disk full, file read-only',
    registers: [registry],
    collect() {
      const { faults } = store.stats();
      this.inc(faults - faultsSeen);
      faultsSeen = faults;
    },
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL: queries carry codes and states.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    duration.observe({ route }, reply.elapsedTime / 1000);
  });
  // On the public listener only when no listener of its own serves it (src/main.ts), and then only to
  // the bearer of TESSERA_METRICS_TOKEN when one is set: it tells the runtime's version and per-route counts.
  if (options.onPublicListener) {
    app.get('/metrics', async (request, reply) => {
      if (!metricsAllowed(options.token, request.headers.authorization)) {
        return reply.code(401).header('www-authenticate', 'Bearer realm="tessera metrics"').send();
      }
      return reply.header('content-type', registry.contentType).send(await registry.metrics());
    });
  }
  return { registry, security: securityCounters(registry) };
}

/** Whether an Authorization header carries the metrics token (always, when there is none). */
export function metricsAllowed(token: string | null, authorization: string | undefined): boolean {
  if (token === null) return true;
  const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  return presented !== undefined && safeEqual(hashToken(presented), hashToken(token));
}

/**
 * Failed and refused sign-ins and client authentications (src/authn/throttle.ts). A sign-in's
 * `reason` is its log line's (src/authn/failures.ts); `outcome` (wrong, throttled, locked) is the
 * coarser word these counters had first.
 */
function securityCounters(registry: Registry): ThrottleObserver {
  const signIns = new Counter({
    name: 'tessera_signin_failures_total',
    help: 'Sign-ins failed (wrong) or refused (throttled, locked), by reason',
    labelNames: ['outcome', 'reason'] as const,
    registers: [registry],
  });
  const clients = new Counter({
    name: 'tessera_client_auth_failures_total',
    help: 'Client authentications failed (wrong) or refused (throttled, locked)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  return {
    signInFailed: (reason) => signIns.inc({ outcome: 'wrong', reason }),
    signInRefused: (locked) => {
      const reason = refusalReason({ locked });
      signIns.inc({ outcome: reason, reason });
    },
    clientAuthFailed: () => clients.inc({ outcome: 'wrong' }),
    clientAuthRefused: (locked) => clients.inc({ outcome: locked ? 'locked' : 'throttled' }),
  };
}
