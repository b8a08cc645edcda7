// A span for every request (when tracing is on: src/telemetry; imported only then), continuing the
// caller's trace when it sends `traceparent` (W3C Trace Context), named `METHOD /route` and the
// current span while its handler runs, so the store's and the signatures' spans are its children.
// Attributes: the method, the route and the path (never the query, which may hold a credential), the
// status, and the request id of the log lines. A 5xx marks it as an error.
import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Tracing } from '../../telemetry/spans.ts';

export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  const open = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const span = tracing.tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.split('?', 1)[0]!,
          ...(route ? { 'http.route': route } : {}),
          'tessera.request_id': request.id,
        },
      },
      parent,
    );
    open.set(request, span);
    done();
  });
  // Every handler runs with its request's span current (hooks registered before the routes).
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      const span = open.get(request);
      if (!span) return handler.call(this, request, reply);
      return context.with(trace.setSpan(context.active(), span), () => handler.call(this, request, reply));
    };
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = open.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      open.delete(request);
    }
    done();
  });
}
