// The metrics of upstream providers (src/upstream), on the registry of ./metrics.ts: how long each
// request to a provider took, and the sign-ins through one that failed, by why. The provider label
// is the operator's id for it: as few values as providers configured.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { UpstreamObserver } from '../../upstream/fetch.ts';

export function upstreamMetrics(registry: Registry): UpstreamObserver {
  const duration = new Histogram({
    name: 'tessera_upstream_request_duration_seconds',
    help: 'Requests to upstream providers (discovery, token, keys, userinfo, GitHub API), by provider',
    labelNames: ['provider'] as const,
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const failures = new Counter({
    name: 'tessera_upstream_failures_total',
    help: 'Steps with an upstream provider that failed: unavailable, provider_error, invalid_response, misconfigured',
    labelNames: ['provider', 'reason'] as const,
    registers: [registry],
  });
  return {
    requested: (provider, seconds) => duration.observe({ provider }, seconds),
    failed: (provider, reason) => failures.inc({ provider, reason }),
  };
}
