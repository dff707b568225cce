import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context as OtelContext, type Link } from '@opentelemetry/api';
import { isTracingSuppressed, suppressTracing } from '@opentelemetry/core';

/**
 * The spans the service makes itself (tracing.ts says why): one per GraphQL operation and
 * one per background job. Without the SDK started the API is a no-op and each call costs a
 * function call.
 */
const tracer = trace.getTracer('community-api');

/**
 * The context of a request the sampler left out: tracing suppressed, no span. Everything the
 * request runs under it makes no span and skips the instrumentations' work: pg's wraps every
 * statement and, under a (non-recording) parent span, computed its attributes, started a span
 * and recorded its duration for each of them (the gate's key and rate-limit statements ran
 * outside the operation); graphql-js's would start traces of its own (tested).
 */
export const UNSAMPLED = suppressTracing(ROOT_CONTEXT);

/**
 * Runs `work` outside any trace: what the service does for itself at boot (building the schema,
 * which type-graphql checks with an introspection query, and parsing and validating the REST
 * facade's documents) made one root trace per document through graphql-js's instrumentation,
 * about 80 traces at every start that no request caused.
 */
export const untraced = <T>(work: () => T): T => context.with(UNSAMPLED, work);

/** A GraphQL operation (REST route or /graphql document), as a child of `parent`, around `run`. */
export async function inOperationSpan<T extends { errors?: readonly unknown[] }>(
  type: string,
  name: string | undefined,
  parent: OtelContext,
  run: () => Promise<T> | T,
): Promise<T> {
  // A request the sampler left out already runs under UNSAMPLED (src/observability/http.ts).
  if (isTracingSuppressed(parent)) return run();
  const request = trace.getSpan(parent);
  // A non-recording parent of another origin: the operation runs outside any span, tracing suppressed (as UNSAMPLED).
  if (request && !request.isRecording()) return context.with(suppressTracing(trace.deleteSpan(parent)), run);
  return tracer.startActiveSpan(
    name ? `${type} ${name}` : type,
    { attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) } },
    parent,
    async (span) => {
      try {
        const result = await run();
        if (result.errors?.length) span.setStatus({ code: SpanStatusCode.ERROR });
        return result;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The HTTP server span of a request: its name and `http.route` become the route template. */
export function nameRequestSpan(ctx: OtelContext | undefined, method: string, route: string): void {
  const span = ctx && trace.getSpan(ctx);
  if (!span?.isRecording()) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}

/** W3C trace context of the active span, to carry in a job's payload (`_trace`); undefined when not tracing. */
export function traceCarrier(): Record<string, string> | undefined {
  if (!trace.getSpan(context.active())?.spanContext().traceFlags) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/**
 * A job's own trace, linked to the trace that queued it (the `_trace` carrier of its payload):
 * a job may run long after, or many times, so it is not a child of the request.
 */
export async function inJobSpan<T>(task: string, payload: unknown, run: () => Promise<T>): Promise<T> {
  const carrier = (payload as { _trace?: Record<string, string> } | null)?._trace;
  const links: Link[] = [];
  if (carrier && typeof carrier === 'object') {
    const queuedBy = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier));
    if (queuedBy) links.push({ context: queuedBy });
  }
  return tracer.startActiveSpan(`job ${task}`, { root: true, kind: SpanKind.CONSUMER, links, attributes: { 'job.task': task } }, async (span) => {
    try {
      return await run();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
