// Optional OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): each request, each call to the
// database and each signature, sent to an OTLP/HTTP collector. Off by default, and free when off:
// the SDK (./sdk.ts, with the @opentelemetry packages) is imported only when tracing is on, and the
// request hooks (../http/plugins/tracing.ts) and the store's spans (./store.ts) are put in place only
// then; the signing code checks one property (./spans.ts).
import type { Tracing } from './spans.ts';

export async function startTracing(
  config: { tracing: { endpoint: string | null; serviceName: string } },
  version: string,
): Promise<Tracing | undefined> {
  const { endpoint, serviceName } = config.tracing;
  if (endpoint === null) return undefined;
  const { startSdk } = await import('./sdk.ts');
  return startSdk({ endpoint, serviceName, version });
}
