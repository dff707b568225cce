/**
 * OpenTelemetry tracing, started before anything it instruments is loaded (main.ts imports
 * this module first). Configured only by the standard OTEL_* variables; with no OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or with
 * `OTEL_SDK_DISABLED=true`, nothing is loaded and the API stays a no-op.
 *
 * Spans are exported as the SDK exports them (batched, OTLP), but with OTLP over HTTP sent from a
 * worker thread (src/observability/export-worker.ts).
 *
 * Instrumented: the HTTP client (node:http; the server span is the service's own,
 * src/observability/http.ts), pg (one span per SQL statement, only
 * inside a trace: the job queue's polling makes none), graphql-js parse and validate (for
 * /graphql; no resolver spans). The REST facade and /graphql execution add one span per
 * GraphQL operation themselves (src/observability/spans.ts): both run documents compiled by
 * graphql-jit, which graphql-js's instrumentation does not see. Express's instrumentation is
 * not used: it adds a span per middleware layer; the HTTP span carries the route template.
 */
import { propagation } from '@opentelemetry/api';
import { requestSampling } from './sampling';

const env = process.env;
const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
const disabled = /^true$/i.test(env.OTEL_SDK_DISABLED ?? '') || /^none$/i.test(env.OTEL_TRACES_EXPORTER ?? '');

/** Paths no trace is worth: probes and scrapes. */
export const UNTRACED = new Set(['/livez', '/readyz', '/health', '/ready', '/metrics']);

export let tracingStarted = false;
/** The ratio a request without a caller's trace context is drawn at before any span (src/observability/sampling.ts). */
export let requestRootRatio: number | undefined;
/** The headers the configured propagators read: a request carrying none of them has no parent. */
export let propagationHeaders: string[] = [];
let shutdownSdk: (() => Promise<void>) | undefined;

if (endpoint && !disabled) {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { GraphQLInstrumentation } = require('@opentelemetry/instrumentation-graphql') as typeof import('@opentelemetry/instrumentation-graphql');
  const { WorkerSpanExporter, workerProtocol } = require('./export-worker') as typeof import('./export-worker');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sampling = requestSampling(env);
  // OTLP over HTTP (the default) is sent from a worker thread (src/observability/export-worker.ts
  // says why); the SDK wraps it in its batch processor, configured by the OTEL_BSP_* variables.
  const protocol = workerProtocol(env);
  const sdk = new NodeSDK({
    ...(sampling.sampler ? { sampler: sampling.sampler } : {}),
    ...(protocol ? { traceExporter: new WorkerSpanExporter(protocol) } : {}),
    serviceName: env.OTEL_SERVICE_NAME ? undefined : 'community-api',
    // Traces only: metrics are Prometheus (GET /metrics), logs are pino lines on stdout,
    // unless the operator asks the SDK for them with OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER.
    ...(env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: [
      // Outgoing requests only (webhook deliveries): the server span is made by
      // src/observability/http.ts (why: there).
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: true,
        requireParentforOutgoingSpans: true,
      }),
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new GraphQLInstrumentation({ depth: 0, ignoreTrivialResolveSpans: true, ignoreResolveSpans: true }),
    ],
  });
  sdk.start();
  tracingStarted = true;
  requestRootRatio = sampling.rootRatio;
  propagationHeaders = propagation.fields().map((f) => f.toLowerCase());
  shutdownSdk = () => sdk.shutdown();
}

/** Flushes the spans still buffered (at shutdown). */
export async function shutdownTracing(): Promise<void> {
  await shutdownSdk?.().catch(() => undefined);
}
