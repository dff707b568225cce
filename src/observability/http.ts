import { randomUUID } from 'node:crypto';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context as OtelContext } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import type { Caller } from '../context';
import { sendProblem } from '../errors/problem';
import { targetRefusal } from '../http/request-target';
import { scrubUrl, type Logger } from '../logger';
import { methodLabel, observeRequest, type Metrics } from './metrics';
import { nameRequestSpan, UNSAMPLED } from './spans';
import { PRESAMPLED_ROOT } from './sampling';
import { propagationHeaders, requestRootRatio, tracingStarted, UNTRACED } from './tracing';

const tracer = trace.getTracer('community-api');

/**
 * The HTTP server span of a request (tracing on): a child of the caller's `traceparent` when
 * it sent one (the sampler follows its sampled flag), named `METHOD /route/template` once a
 * handler labels the route. Made here rather than by the http instrumentation: that one
 * computes every attribute and binds the request's and response's event emitters to the
 * context for every request, sampled or not, which was most of what tracing cost an unsampled
 * request. Here a request the sampler leaves out pays for the sampling decision and one
 * context switch into UNSAMPLED (src/observability/spans.ts): no span, and nothing under it
 * makes one; with `parentbased_traceidratio` and no trace context from the caller, the
 * decision is a draw made before any OpenTelemetry call (src/observability/sampling.ts).
 */
function startRequestSpan(req: Request, path: string): OtelContext {
  // A request without its caller's trace context is drawn first (src/observability/sampling.ts):
  // most are left out before any span, id or propagator is made.
  const ratio = requestRootRatio;
  const drawn = ratio !== undefined && !propagationHeaders.some((h) => req.headers[h] !== undefined);
  if (drawn && !(Math.random() < ratio)) return UNSAMPLED;
  const parent = drawn ? PRESAMPLED_ROOT : propagation.extract(ROOT_CONTEXT, req.headers);
  const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) return UNSAMPLED;
  span.setAttributes({
    'http.request.method': req.method,
    'url.path': path,
    'url.scheme': req.protocol,
    'network.protocol.version': req.httpVersion,
    ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
    ...(req.socket.remoteAddress ? { 'client.address': req.socket.remoteAddress } : {}),
  });
  return trace.setSpan(drawn ? ROOT_CONTEXT : parent, span);
}

function endRequestSpan(ctx: OtelContext, status: number): void {
  const span = trace.getSpan(ctx);
  if (!span?.isRecording()) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Runs `work` in the request's trace context again: a body parser's stream callbacks run in
 * the socket's context, not the request's, so a handler after one re-enters it.
 */
export function inRequestTrace<T>(res: Response, work: () => T): T {
  const ctx = res.locals.otel as OtelContext | undefined;
  return ctx ? context.with(ctx, work) : work();
}

/** The caller's own X-Request-Id when it is 1-128 visible ASCII characters. */
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The request's id: the caller's X-Request-Id when well-formed, else a new UUID. */
export const requestIdOf = (given: string | string[] | undefined): string =>
  typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();

/** The label of a path no route served (404s, probes of unknown paths): one value, never the path. */
export const UNMATCHED = 'unmatched';

const FIXED = new Set(['/livez', '/readyz', '/health', '/ready', '/metrics', '/graphql', '/docs']);

/** Express path templates (`/groups/:identifier`) -> a matcher for paths no handler labelled (gate refusals, 405s). */
export function routeMatcher(prefix: string, templates: string[]): (path: string) => string | undefined {
  const compiled = [...new Set(templates)].map((t) => ({
    template: prefix + t,
    regex: new RegExp(`^${(prefix + t).replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}/?$`),
  }));
  return (path) => compiled.find((c) => c.regex.test(path))?.template;
}

export interface RequestObserverOptions {
  logger: Logger;
  metrics?: Metrics;
  /** REST paths -> route template, for answers given before the route's own handler ran. */
  restRoute: (path: string) => string | undefined;
  /** True from SIGTERM on: answers close their connection, so keep-alive clients move on. */
  draining: () => boolean;
}

/**
 * First middleware of the app: the request id (echoed on every answer); a request target or
 * host the server's first listener refused (src/http/request-target.ts) answered as a 400; and
 * once the answer is sent, one log line and one observation of the duration histogram, both by route template.
 * A handler names its route with `res.locals.route` (the REST facade, /graphql); any other
 * path is matched against the route table or counted as `unmatched`.
 */
export function requestObserver({ logger, metrics, restRoute, draining }: RequestObserverOptions) {
  return (req: Request, res: Response, next: NextFunction) => {
    // A target or host the server's first listener refused (src/http/request-target.ts).
    const refused = targetRefusal(req);
    const requestId = requestIdOf(req.headers['x-request-id']);
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    if (draining()) res.setHeader('Connection', 'close');
    const requestPath = req.originalUrl.split('?')[0];
    // As the client sent it (a HEAD to /graphql is served as GET: src/app.ts).
    const method = req.method;
    const otel = tracingStarted && !UNTRACED.has(requestPath) ? startRequestSpan(req, requestPath) : undefined;
    res.locals.otel = otel;
    const started = process.hrtime.bigint();
    metrics?.activeRequests.inc();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics?.activeRequests.dec();
      // 499: the client went away before the answer was complete.
      const status = res.writableFinished ? res.statusCode : 499;
      const path = requestPath;
      const rest = path.startsWith('/api/v1/');
      const labelled = res.locals.route as string | undefined;
      const route = labelled ?? (rest ? restRoute(path) : FIXED.has(path) ? path : undefined) ?? UNMATCHED;
      if (otel) {
        // Answered before its handler named the route (the gate's 401 and 429, a 405, a body its
        // parser refused): the span takes the template the metrics and the log line have; only a
        // path no route serves keeps the bare method as its name.
        if (!labelled && route !== UNMATCHED) nameRequestSpan(otel, method, route);
        endRequestSpan(otel, status);
      }
      const api = rest ? 'rest' : path === '/graphql' ? 'graphql' : 'other';
      const operationType =
        (res.locals.operationType as string | undefined) ??
        (res.locals.graphql as { type?: string } | undefined)?.type ?? (api === 'rest' ? (method === 'GET' || method === 'HEAD' ? 'query' : 'mutation') : 'none');
      if (metrics) observeRequest(metrics, { method, route, status, api, operationType }, seconds);
      // The request's line is at info: below that level nothing of it is built.
      if (!logger.isLevelEnabled('info')) return;
      const caller = res.locals.caller as Caller | undefined;
      const span = otel && trace.getSpan(otel)?.spanContext();
      logger.info(
        {
          requestId,
          method,
          route,
          url: scrubUrl(req.originalUrl),
          status,
          ms: Math.round(seconds * 1e4) / 10,
          ...(caller?.kind === 'key' ? { keyId: caller.keyId } : caller ? { caller: caller.kind } : {}),
          ...(span && span.traceFlags ? { trace_id: span.traceId, span_id: span.spanId } : {}),
        },
        'request',
      );
    });
    if (refused) return sendProblem(res, refused);
    if (otel) return context.with(otel, next);
    next();
  };
}

/** A request answered before Express saw it (src/http-errors.ts): by Node's parser, the `Expect` check or a refused WebSocket handshake. */
export interface EarlyAnswer {
  /** The method, when the request line could be read (else OTHER). */
  method: string;
  /** `/graphql` for a refused handshake, else UNMATCHED: no route served it. */
  route: string;
  api: 'graphql' | 'other';
  status: number;
  requestId: string;
  /** The path as far as it could be read (`/` when not), without the query. */
  path: string;
  /** What was refused: the parser's code (`HPE_INVALID_HEADER_TOKEN`), `expect` or `handshake`. */
  refused: string;
}

/**
 * The request log line and metrics of an answer written before Express (src/http-errors.ts),
 * as every other answer has them: counted in `http_server_requests_total` and the duration
 * histogram (a duration of 0: the answer is written as soon as the request is refused, and
 * the time its bytes took to arrive is not known), and one `request` line with `refused`.
 */
export function earlyAnswerObserver({ logger, metrics }: { logger: Logger; metrics?: Metrics }) {
  return (answer: EarlyAnswer): void => {
    const { method, route, api, status, requestId, path, refused } = answer;
    if (metrics) observeRequest(metrics, { method, route, status, api, operationType: 'none' }, 0);
    if (!logger.isLevelEnabled('info')) return;
    logger.info({ requestId, method: methodLabel(method), route, url: path, status, ms: 0, refused }, 'request');
  };
}

/** Names the request's route (metrics label, log field, HTTP span name) once a handler knows it. */
export function labelRoute(req: Request, res: Response, route: string, operationType?: string): void {
  res.locals.route = route;
  if (operationType) res.locals.operationType = operationType;
  nameRequestSpan(res.locals.otel, req.method, route);
}

/** GET /metrics: the Prometheus text format. */
export function metricsHandler(metrics: Metrics) {
  return async (_req: Request, res: Response, next: NextFunction) => {
    try {
      const text = await metrics.text();
      res.setHeader('Content-Type', metrics.contentType);
      res.end(text);
    } catch (err) {
      next(err);
    }
  };
}
