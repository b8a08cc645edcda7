// The OpenTelemetry SDK, set up by hand rather than by @opentelemetry/sdk-node: a tracer provider
// that batches spans to the OTLP/HTTP exporter (JSON to <endpoint>/v1/traces; the exporter also reads
// OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION), the AsyncLocalStorage context manager
// (a span started while another is current is its child, across awaits), and W3C Trace Context, so
// that a request's `traceparent` continues its caller's trace. Imported only when tracing is on.
import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type Spans, spans, type Tracing } from './spans.ts';

export function startSdk(options: { endpoint: string; serviceName: string; version: string }): Tracing {
  const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', `${options.endpoint.replace(/\/$/, '')}/`).href });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.version }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('tessera', options.version);

  const active: Spans = {
    span(name, attributes, work) {
      return tracer.startActiveSpan(name, { attributes }, async (span) => {
        try {
          return await work();
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
  spans.active = active;
  return {
    spans: active,
    tracer,
    async shutdown() {
      spans.active = undefined;
      await provider.shutdown();
    },
  };
}
