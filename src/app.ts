import cors from 'cors';
import helmet from 'helmet';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GraphQLError } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type Redis from 'ioredis';
import { Gate } from './auth/gate';
import type { Config } from './config';
import { createContext, enterCaller } from './context';
import { callerScope } from './db/caller-budget';
import { READ_ROUTER, withReadScope } from './db/replicas';
import { readRouting } from './graphql/read-routing';
import { apolloMiddleware } from './graphql/express';
import { problem, problemOf, sendClassified, sendProblem } from './errors/problem';
import { KINDS } from './errors/classify';
import { buildSchema } from './graphql/schema';
import { createApollo, formatError } from './graphql/server';
import { nestingError, type QueryLimits } from './graphql/limits';
import { CALLER_LINE, CallerQueue, callerLine } from './http/caller-queue';
import { answerOptions, methodNotAllowed, observeEarlyAnswers } from './http-errors';
import type { Logger } from './logger';
import type { Metrics } from './observability/metrics';
import type { Health } from './observability/health';
import { earlyAnswerObserver, inRequestTrace, labelRoute, metricsHandler, requestObserver, routeMatcher } from './observability/http';
import { RequestLimiter } from './rate-limit/limiter';
import { createFacade, JSON_LIMIT } from './rest/facade';
import { checkPathParams, checkQueryEncoding } from './rest/path-params';
import { bodyPointer } from './rest/params';
import { limitJsonDepth } from './common/json-depth';
import { utf8Only } from './http/utf8-body';
import { routes } from './rest/routes';
import { openApiJson } from './openapi';
import { mountOpenApi } from './openapi/http';
import { DOCUMENT_PATH } from './openapi/document';
import { graphqlIdempotency } from './graphql/idempotency';
import type { GateOutcome } from './auth/gate';
import { mountIde } from './graphql/ide';
import { attachSubscriptions } from './graphql/subscriptions';
import { KEY_EVENTS } from './auth/key-cache';
import type { RuntimeState } from './state';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  pool: Pool;
  redis?: Redis;
  logger: Logger;
  state: RuntimeState;
  metrics?: Metrics;
  health: Health;
}

/** Body-parser and other thrown errors become problems (errors/classify.ts); anything unknown is a logged 500. */
function errorHandler(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendClassified(res, err, () => logger.error({ requestId: res.locals.requestId, err }, 'unhandled error'), (i) => bodyPointer(i.path) || '/');
  };
}

export async function createApp(deps: AppDeps) {
  const { config, orm, pool, redis, logger, state, metrics, health } = deps;
  // Read-only requests on replicas (src/db/replicas.ts), when configured.
  const reads = state.find(READ_ROUTER);
  const schema = buildSchema();
  const em = orm.em as unknown as import('@mikro-orm/postgresql').EntityManager;
  const gate = new Gate(
    pool,
    // With replicas, each count also reads the caller's last write position (read-your-writes without a round trip of its own).
    new RequestLimiter({ pg: pool, redis }, 'rl-key', undefined, Boolean(reads)),
    new RequestLimiter({ pg: pool, redis }, 'rl-authfail', config.authFailureWindowSeconds),
    config,
    state.get(KEY_EVENTS),
    (err) => logger.warn({ err: err.message }, 'could not record API key use'),
    (reason) => metrics?.rateLimited.inc({ reason }),
  );
  // One set of document limits for /graphql over HTTP and over graphql-ws.
  const limits: QueryLimits = {
    maxDepth: config.graphqlMaxDepth,
    maxCost: config.graphqlMaxCost,
    maxAliases: config.graphqlMaxAliases,
    maxRootFields: config.graphqlMaxRootFields,
    maxDirectives: config.graphqlMaxDirectives,
    maxTokens: config.graphqlMaxTokens,
  };
  const apollo = createApollo(schema, logger, config.graphqlSandbox, limits, config.graphqlJit, [readRouting(reads)]);
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // answers are per-key and rarely repeated: hashing every body costs more than it saves
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  // Express 5's req.query is a getter that parses the query string again at every read, and a
  // list route reads it once per parameter: parsed once per request here instead.
  app.use((req, _res, next) => {
    Object.defineProperty(req, 'query', { value: req.query, writable: true, enumerable: true, configurable: true });
    next();
  });
  // Request id, one log line and the duration histogram per request, by route template.
  app.use(requestObserver({ logger, metrics, restRoute: routeMatcher('/api/v1', routes.map((r) => r.path)), draining: () => health.draining }));
  // A JSON API: the HTML pages (Sandbox, docs) bring their own CSP.
  app.use(helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }));
  // Unset CORS_ORIGINS: no CORS middleware, so no CORS header at all (not even the exposed-headers list).
  if (config.corsOrigins === '*' || config.corsOrigins.length > 0) {
    app.use(
      cors({
        origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
        allowedHeaders: ['Content-Type', 'X-API-Key', 'Authorization', 'X-Request-Id', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Consistency-Token'],
        exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'ETag', 'Idempotent-Replayed', 'Consistency-Token'],
        methods: ['GET', 'POST', 'PATCH', 'DELETE'],
        maxAge: 600,
      }),
    );
  }

  // OPTIONS on a known path: 204 with Allow, before any key is asked for.
  const restPaths = routes.map((r) => ({ path: `/api/v1${r.path}`, methods: [r.method] }));
  const fixedPaths = [
    { path: '/health', methods: ['GET'] },
    { path: '/ready', methods: ['GET'] },
    { path: '/livez', methods: ['GET'] },
    { path: '/readyz', methods: ['GET'] },
    ...(metrics && config.metricsPort === undefined ? [{ path: '/metrics', methods: ['GET'] }] : []),
  ];
  const graphqlPath = { path: '/graphql', methods: ['GET', 'POST'] };
  const documentPaths = [
    { path: `/api/v1${DOCUMENT_PATH}`, methods: ['GET'] },
    { path: '/docs', methods: ['GET'] },
  ];
  app.use(answerOptions([...restPaths, graphqlPath, ...fixedPaths, ...documentPaths]));

  // /livez and /readyz (Kubernetes probes), /health and /ready their aliases: no key.
  health.mount(app);
  // Without METRICS_PORT the scrape shares the service's port (main.ts serves it otherwise).
  if (metrics && config.metricsPort === undefined) app.get('/metrics', metricsHandler(metrics));

  // Before the /api/v1 gate: the contract and its docs page are readable without a key.
  mountOpenApi(app, () => openApiJson(schema));

  // One caller's requests are processed a few at a time; the rest wait in its line (src/http/caller-queue.ts).
  const line = new CallerQueue({
    perCaller: config.requestsPerCaller,
    waitMs: config.callerQueueWaitMs,
    observer: metrics && { waited: () => metrics.callerQueueWaits.inc(), refused: () => metrics.callerQueueRefusals.inc() },
    alone: Math.max(config.requestsPerCaller, config.requestsPerCallerAlone),
    heavyMs: config.heavyCallerMs,
  });
  state.set(CALLER_LINE, line);
  app.use(['/api/v1', '/graphql'], callerLine(line));

  const v1 = express.Router();
  v1.use(async (req, res, next) => {
    const outcome = await gate.check(req, res);
    if (outcome.ok) {
      res.locals.caller = outcome.caller;
      return next();
    }
    sendProblem(res, problemOf(outcome.code, outcome.detail), outcome.retryAfter);
  });
  v1.use(checkPathParams(routes.map((r) => r.path)), checkQueryEncoding);
  v1.use(createFacade(routes, { schema, em, pool, state, logger, publicBaseUrl: config.publicBaseUrl, jit: config.graphqlJit, jsonMaxDepth: config.jsonMaxDepth }));
  v1.use(methodNotAllowed([...restPaths, documentPaths[0]]));
  v1.use((req, res) => sendProblem(res, problem(404, `No route ${req.method} ${req.baseUrl}${req.path}`)));
  app.use('/api/v1', v1);

  if (config.graphqlSandbox) mountIde(app);
  app.use(
    '/graphql',
    methodNotAllowed([graphqlPath]),
    // HEAD: answered as GET (Apollo serves only GET and POST); Node sends no body for a HEAD request.
    (req: Request, _res: Response, next: NextFunction) => {
      if (req.method === 'HEAD') req.method = 'GET';
      next();
    },
    express.json({ limit: JSON_LIMIT, verify: utf8Only }),
    limitJsonDepth(config.jsonMaxDepth),
    // After the body is read (stream callbacks would lose the scope): the caller's connection
    // budget, and the read scope a query fills in (src/graphql/read-routing.ts).
    (req: Request, res: Response, next: NextFunction) => {
      labelRoute(req, res, '/graphql');
      inRequestTrace(res, () => callerScope.run({}, () => (reads ? withReadScope(next) : next())));
    },
    refuseDeepDocuments(config.jsonMaxDepth),
    graphqlIdempotency(apollo, gate, em, pool, state),
    apolloMiddleware(apollo, async ({ req, res }) => {
      const outcome = (res.locals.gateOutcome as GateOutcome | undefined) ?? (await gate.check(req, res, true));
      if (!outcome.ok) {
        const headers = new Map<string, string>();
        if (outcome.retryAfter !== undefined) headers.set('retry-after', String(outcome.retryAfter));
        const kind = KINDS[outcome.code];
        throw new GraphQLError(outcome.detail, { extensions: { code: kind.graphql, http: { status: kind.status, headers } } });
      }
      if (outcome.caller) enterCaller(outcome.caller, (fields, msg) => logger.info(fields, msg));
      const context = createContext(em, outcome.caller, res.locals.requestId, state);
      // For the request's log line and metrics: the key id and, once resolved, the operation type.
      res.locals.caller = outcome.caller;
      res.locals.graphql = context.operation = {};
      return context;
    }),
  );

  app.use(methodNotAllowed([...fixedPaths, ...documentPaths]));
  app.use((req, res) => sendProblem(res, problem(404, `No route ${req.method} ${req.path}`)));
  app.use(errorHandler(logger));

  let subscriptions: ReturnType<typeof attachSubscriptions> | undefined;
  return {
    app,
    /** GraphQL subscriptions (graphql-ws) on the HTTP server that serves `app`. */
    attach(server: import('node:http').Server) {
      // Answers written before Express (parser errors, 417, refused handshakes) are logged and counted too.
      observeEarlyAnswers(server, earlyAnswerObserver({ logger, metrics }));
      subscriptions = attachSubscriptions(server, {
        schema,
        em,
        state,
        gate,
        logger,
        limits: {
          document: limits,
          perConnection: config.wsMaxSubscriptionsPerConnection,
          perKey: config.wsMaxSubscriptionsPerKey,
          maxMessageBytes: config.wsMaxMessageBytes,
          jsonMaxDepth: config.jsonMaxDepth,
          initTimeoutMs: config.wsInitTimeoutMs,
          // A revoked key's open connections close within about twice the key cache's lifetime.
          keyRecheckMs: Math.max(config.keyCacheTtlMs, 1000),
        },
        format: formatError(logger, !config.graphqlSandbox),
        clientAddress: (request) => {
          // Express's own `req.ip` (its request prototype, as Express gives every request), so
          // TRUST_PROXY means the same for the upgrade request as for any HTTP request.
          const req = Object.create(app.request, { headers: { value: request.headers }, socket: { value: request.socket } }) as Request;
          return req.ip ?? 'unknown';
        },
      });
      metrics?.countSubscriptions(() => subscriptions?.live() ?? 0);
    },
    close: async () => {
      await subscriptions?.close();
      await apollo.stop();
      await gate.usage.flush();
    },
  };
}

/** A document nested deeper than JSON_MAX_DEPTH is a parse failure, answered as Apollo answers one, before anything parses it. */
function refuseDeepDocuments(max: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const query: unknown = req.method === 'GET' ? req.query.query : (req.body as { query?: unknown } | undefined)?.query;
    const refused = typeof query === 'string' ? nestingError(query, max) : undefined;
    if (!refused) return next();
    res.status(400).json({ errors: [refused.toJSON()] });
  };
}
