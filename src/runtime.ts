import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { Pool } from 'pg';
import type Redis from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from './app';
import { answerClientErrors } from './http-errors';
import { normalizeTarget } from './http/request-target';
import { upgradesToWebSocket } from './http/upgrade';
import type { Config } from './config';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from './db/embedded';
import { openOrm } from './db/orm';
import { CallerBudget, installCallerBudget } from './db/caller-budget';
import { installTenancy, prepareTenancy } from './db/tenancy';
import { READ_ROUTER, ReadRouter } from './db/replicas';
import { QUEUE_SCHEMA, migrateQueue, startQueue, type JobQueue, type QueueOptions } from './jobs/queue';
import { schedules, tasks } from './jobs/tasks';
import { createLogger, type Logger } from './logger';
import { modules } from './modules';
import type { ModuleStop } from './modules/module';
import { RuntimeState } from './state';
import { openSecretBox, SECRET_BOX } from './security/secret-box';
import { Metrics } from './observability/metrics';
import { Health } from './observability/health';

export interface Runtime {
  app: import('express').Express;
  orm: MikroORM;
  pool: Pool;
  redis?: Redis;
  logger: Logger;
  /** What this runtime keeps for its life (src/state.ts), filled by the modules' start hooks. */
  state: RuntimeState;
  /** This instance's job worker, when started (see startRuntime's `worker`). */
  queue?: JobQueue;
  /** Prometheus metrics (undefined with METRICS_ENABLED=false). */
  metrics?: Metrics;
  /** Liveness and readiness; `health.draining` turns readiness off (SIGTERM). */
  health: Health;
  /** Serves GraphQL subscriptions on the server listening for `app`. */
  attach(server: Server): void;
  close(): Promise<void>;
}

/** With no DATABASE_URL, a real PostgreSQL runs embedded from .data/ (zero setup). */
export async function resolveDatabase(config: Config, logger: Logger): Promise<{ url: string; embedded?: EmbeddedServer }> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  logger.info({ dir: config.embeddedPgDir, port: config.embeddedPgPort }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres({ dir: config.embeddedPgDir, port: config.embeddedPgPort });
  const url = await ensureDatabase(embedded.url, 'community_api');
  return { url, embedded };
}

export interface RuntimeOptions {
  migrate?: boolean;
  /** Run background jobs in this instance too (main.ts: yes; tests: when they need it). */
  worker?: boolean | QueueOptions;
}

export async function startRuntime(config: Config, databaseUrl: string, opts: RuntimeOptions = {}): Promise<Runtime> {
  const logger = createLogger(config.logLevel);
  const orm = await openOrm(
    databaseUrl,
    config.dbPoolMax,
    opts.migrate ?? true,
    { statementMs: config.dbStatementTimeoutMs, lockMs: config.dbLockTimeoutMs },
    config.databaseReplicaUrls,
  );
  const pool = new Pool({ connectionString: databaseUrl, max: 5, connectionTimeoutMillis: 3000 });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'rate-limit pool error'));
  const metrics = config.metricsEnabled
    ? new Metrics({ orm, pool, poolMax: config.dbPoolMax, tasks: Object.keys(tasks), logger })
    : undefined;
  installCallerBudget(
    orm,
    new CallerBudget(config.dbConnectionsPerCaller, config.dbCallerWaitMs, metrics && {
      waited: () => metrics.budgetWaits.inc(),
      refused: () => metrics.budgetRefusals.inc(),
    }),
  );
  if (metrics) {
    // 57014: statement_timeout; 55P03: lock_timeout (knex's event, also emitted by db/prepared.ts).
    orm.em.getConnection().getKnex().on('query-error', (err: { code?: string }) => {
      if (err?.code === '57014') metrics.statementsCancelled.inc({ reason: 'statement_timeout' });
      else if (err?.code === '55P03') metrics.statementsCancelled.inc({ reason: 'lock_timeout' });
    });
  }
  const health = new Health(pool);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  redis?.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  // Reads on replicas (src/db/replicas.ts), when DATABASE_REPLICA_URLS names any.
  const reads = config.databaseReplicaUrls.length
    ? new ReadRouter(orm, databaseUrl, config.databaseReplicaUrls, { maxLagMs: config.replicaMaxLagMs, poolMax: config.dbPoolMax, logger, redis })
    : undefined;
  await reads?.start();
  // Always: requests enqueue jobs in their own transactions, worker or not (idempotent, one query when current).
  await migrateQueue(databaseUrl, logger);
  // Row-level security: the service role and its grants, then request work switched to it (src/db/tenancy.ts).
  if (config.dbRowSecurity) await prepareTenancy(pool, QUEUE_SCHEMA);
  else logger.warn('DB_ROW_SECURITY=off: the database does not hold requests to their community (the application still does)');
  // Off, the guard still carries the plan settings, the deferred BEGIN and held statements: both modes send alike.
  installTenancy(orm.em, config.dbRowSecurity);
  const state = new RuntimeState();
  state.set(SECRET_BOX, openSecretBox(config, (msg, fields) => logger.info(fields, msg)));
  if (reads) state.set(READ_ROUTER, reads);
  const stops: ModuleStop[] = [];
  for (const m of modules) {
    // Outside any request: a hook's database work reads no tenant row unless it asks for the bypass (asOwner).
    const stop = await m.start?.({ config, databaseUrl, orm, logger, state });
    if (stop) stops.unshift(stop);
  }
  const { app, attach, close } = await createApp({ config, orm, pool, redis, logger, state, metrics, health });
  const queue = opts.worker ? await startQueue(databaseUrl, { orm, logger, state, metrics }, tasks, { schedules, ...(opts.worker === true ? {} : opts.worker) }) : undefined;
  return {
    app,
    orm,
    pool,
    redis,
    logger,
    state,
    queue,
    metrics,
    health,
    attach,
    async close() {
      await queue?.stop(); // running jobs finish or stop at a checkpoint before the ORM closes
      await close();
      for (const stop of stops) await stop();
      await reads?.close();
      redis?.disconnect();
      await pool.end();
      await orm.close(true);
    },
  };
}

/** ioredis is loaded only when REDIS_URL is set: without it, its code never enters the heap (docs/performance.md). */
async function connectRedis(url: string): Promise<Redis> {
  const { Redis: RedisClient } = await import('ioredis');
  return new RedisClient(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
}

export function listen(app: RequestListener, port: number): Promise<Server> {
  // Not app.listen: Express 5 calls its callback on 'error' too, so a taken port looked like a start.
  return new Promise((resolve, reject) => {
    // The request target and Host first, before any listener reads them; a request without
    // Host gets through Node, to be answered as problem+json (src/http/request-target.ts).
    // Only a WebSocket handshake on /graphql is upgraded; any other Upgrade is served as HTTP
    // (src/http/upgrade.ts). @types/node 22 does not declare the option yet.
    const options: ServerOptions & { shouldUpgradeCallback: (req: IncomingMessage) => boolean } = { requireHostHeader: false, shouldUpgradeCallback: upgradesToWebSocket };
    const server = createServer(options, normalizeTarget);
    server.on('request', app);
    answerClientErrors(server);
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
