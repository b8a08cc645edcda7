// What traced code asks of the tracing (./index.ts) while it is on: a span around a piece of work.
// This file loads nothing of OpenTelemetry; while tracing is off `spans.active` is undefined, and a
// caller checks that one property and goes on: no span, no closure, no allocation.

export type SpanAttributes = Record<string, string | number | boolean>;

export interface Spans {
  /** Runs `work` in a span of this name, a child of the current one; a thrown error marks the span. */
  span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T>;
}

export const spans: { active: Spans | undefined } = { active: undefined };

/** Tracing while it is on (./index.ts starts it, ./sdk.ts makes it). */
export interface Tracing {
  spans: Spans;
  /** The request spans' tracer and the propagation of an incoming `traceparent` (W3C Trace Context). */
  tracer: import('@opentelemetry/api').Tracer;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}
