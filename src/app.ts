import { randomUUID } from 'node:crypto';
import cors from 'cors';
import helmet from 'helmet';
import express, { type NextFunction, type Request, type Response } from 'express';
import { expressMiddleware } from '@as-integrations/express5';
import { GraphQLError } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type Redis from 'ioredis';
import { Gate } from './auth/gate';
import type { Config } from './config';
import { createContext } from './context';
import { budgetKey, callerScope } from './db/caller-budget';
import { problem, problemOf, sendClassified, sendProblem } from './errors/problem';
import { KINDS } from './errors/classify';
import { buildSchema } from './graphql/schema';
import { createApollo, formatError } from './graphql/server';
import type { QueryLimits } from './graphql/limits';
import { methodNotAllowed } from './http-errors';
import { scrubUrl, type Logger } from './logger';
import { RequestLimiter } from './rate-limit/limiter';
import { createFacade, JSON_LIMIT } from './rest/facade';
import { checkPathParams } from './rest/path-params';
import { bodyPointer } from './rest/params';
import { limitJsonDepth } from './common/json-depth';
import { routes } from './rest/routes';
import { openApiDocument } from './openapi';
import { openApiRouter } from './openapi/http';
import { graphqlIdempotency } from './graphql/idempotency';
import type { GateOutcome } from './auth/gate';
import { ideRouter } from './graphql/ide';
import { attachSubscriptions } from './modules/events/subscriptions';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  pool: Pool;
  redis?: Redis;
  logger: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

function requestIds(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({ requestId, method: req.method, url: scrubUrl(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}

/** Body-parser and other thrown errors become problems (errors/classify.ts); anything unknown is a logged 500. */
function errorHandler(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendClassified(res, err, () => logger.error({ requestId: res.locals.requestId, err }, 'unhandled error'), (i) => bodyPointer(i.path) || '/');
  };
}

export async function createApp(deps: AppDeps) {
  const { config, orm, pool, redis, logger } = deps;
  const schema = buildSchema();
  const em = orm.em as unknown as import('@mikro-orm/postgresql').EntityManager;
  const gate = new Gate(
    pool,
    new RequestLimiter({ pg: pool, redis }, 'rl-key'),
    new RequestLimiter({ pg: pool, redis }, 'rl-authfail', config.authFailureWindowSeconds),
    config,
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
  const apollo = createApollo(schema, logger, config.graphqlSandbox, limits, config.graphqlJit);
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // answers are per-key and rarely repeated: hashing every body costs more than it saves
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  app.use(requestIds(logger));
  // A JSON API: the HTML pages (Sandbox, docs) bring their own CSP.
  app.use(helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }));
  app.use(
    cors({
      origin: config.corsOrigins === '*' ? '*' : config.corsOrigins,
      allowedHeaders: ['Content-Type', 'X-API-Key', 'Authorization', 'X-Request-Id', 'Idempotency-Key', 'If-Match', 'If-None-Match'],
      exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'ETag', 'Idempotent-Replayed'],
      methods: ['GET', 'POST', 'PATCH', 'DELETE'],
      maxAge: 600,
    }),
  );

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/ready', async (_req, res) => {
    try {
      await pool.query('select 1');
      res.json({ status: 'ready' });
    } catch {
      sendProblem(res, problem(503, 'The database is not reachable'));
    }
  });

  // Before the /api/v1 gate: the contract and its docs page are readable without a key.
  app.use(openApiRouter(openApiDocument(schema)));

  const v1 = express.Router();
  v1.use(async (req, res, next) => {
    const outcome = await gate.check(req, res);
    if (outcome.ok) {
      res.locals.caller = outcome.caller;
      return next();
    }
    sendProblem(res, problemOf(outcome.code, outcome.detail), outcome.retryAfter);
  });
  v1.use(checkPathParams(routes.map((r) => r.path)));
  v1.use(createFacade(routes, { schema, em, pool, logger, publicBaseUrl: config.publicBaseUrl, jit: config.graphqlJit, jsonMaxDepth: config.jsonMaxDepth }));
  v1.use(methodNotAllowed(routes.map((r) => ({ path: `/api/v1${r.path}`, methods: [r.method] }))));
  v1.use((req, res) => sendProblem(res, problem(404, `No route ${req.method} ${req.baseUrl}${req.path}`)));
  app.use('/api/v1', v1);

  if (config.graphqlSandbox) app.use(ideRouter());
  app.use(
    '/graphql',
    methodNotAllowed([{ path: '/graphql', methods: ['GET', 'POST'] }]),
    express.json({ limit: JSON_LIMIT }),
    limitJsonDepth(config.jsonMaxDepth),
    // After the body is read (stream callbacks would lose the scope): the caller's connection budget.
    (_req: Request, _res: Response, next: NextFunction) => callerScope.run({}, next),
    graphqlIdempotency(apollo, gate, em, pool),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        const outcome = (res.locals.gateOutcome as GateOutcome | undefined) ?? (await gate.check(req, res, true));
        if (!outcome.ok) {
          const headers = new Map<string, string>();
          if (outcome.retryAfter !== undefined) headers.set('retry-after', String(outcome.retryAfter));
          const kind = KINDS[outcome.code];
          throw new GraphQLError(outcome.detail, { extensions: { code: kind.graphql, http: { status: kind.status, headers } } });
        }
        const scope = callerScope.getStore();
        if (scope && outcome.caller) scope.key = budgetKey(outcome.caller);
        return createContext(em, outcome.caller, res.locals.requestId);
      },
    }),
  );

  app.use(
    methodNotAllowed([
      { path: '/health', methods: ['GET'] },
      { path: '/ready', methods: ['GET'] },
    ]),
  );
  app.use((req, res) => sendProblem(res, problem(404, `No route ${req.method} ${req.path}`)));
  app.use(errorHandler(logger));

  let subscriptions: ReturnType<typeof attachSubscriptions> | undefined;
  return {
    app,
    /** GraphQL subscriptions (graphql-ws) on the HTTP server that serves `app`. */
    attach(server: import('node:http').Server) {
      subscriptions = attachSubscriptions(server, {
        schema,
        em,
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
    },
    close: async () => {
      await subscriptions?.close();
      await apollo.stop();
    },
  };
}
