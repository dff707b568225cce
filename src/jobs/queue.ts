import { Logger as WorkerLogger, parseCronItems, run, runMigrations, type CronItem, type JobHelpers, type Runner, type TaskList } from 'graphile-worker';
import { Pool } from 'pg';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import type { RuntimeState } from '../state';
import { WorkerLiveness } from './liveness';
import { STATISTICS_REFRESH_SECONDS, StatisticsRefresher } from './statistics';
import type { Metrics } from '../observability/metrics';
import { inJobSpan, traceCarrier } from '../observability/spans';
import { asOwner } from '../db/tenancy';

/**
 * The durable job queue: graphile-worker on the service's own PostgreSQL (docs/jobs.md).
 * Jobs are rows in the `graphile_worker` schema, so they survive restarts and crashes,
 * and every instance running a worker takes its share with `FOR UPDATE SKIP LOCKED`.
 */
export const QUEUE_SCHEMA = 'graphile_worker';

/** What a task handler gets besides its payload. */
export interface TaskDeps {
  orm: MikroORM;
  logger: Logger;
  /** The runtime's state (src/state.ts): settings and the like a task reads. */
  state: RuntimeState;
  metrics?: Metrics;
}
export type TaskHandler = (payload: unknown, helpers: JobHelpers, deps: TaskDeps) => Promise<void>;

export interface QueueOptions {
  /** Jobs run at once by this instance (default 2). */
  concurrency?: number;
  /** How often a worker looks for jobs that became due (ms, default 1000); new jobs arrive by LISTEN/NOTIFY at once. */
  pollInterval?: number;
  /** Seconds without a heartbeat after which a worker counts as dead (default 30). */
  staleSeconds?: number;
  /** Recurring tasks (graphile-worker cron; fired once per slot however many instances run). */
  schedules?: CronItem[];
  /** Seconds between two looks for tables whose statistics are stale (default STATISTICS_REFRESH_SECONDS; 0: never). See statistics.ts. */
  statisticsSeconds?: number;
}

export interface JobQueue {
  /** Graceful: takes no new jobs, lets running ones finish (they stop at their next checkpoint), then closes. */
  stop(): Promise<void>;
}

const LEVELS = { error: 'error', warning: 'warn', info: 'info', debug: 'debug' } as const;

function workerLogger(logger: Logger): WorkerLogger {
  const log = logger.child({ component: 'jobs' });
  return new WorkerLogger(() => (level, message, meta) => {
    log[LEVELS[level as keyof typeof LEVELS] ?? 'info'](meta ?? {}, message);
  });
}

/**
 * Creates or upgrades the queue's schema with graphile-worker's own migrations. Safe to run
 * from several instances at once (it detects a concurrent migration) and a single query when
 * up to date; run at every start because requests enqueue jobs in their own transactions.
 */
export async function migrateQueue(databaseUrl: string, logger: Logger): Promise<void> {
  const pool = queuePool(databaseUrl, 1, logger);
  try {
    await runMigrations({ pgPool: pool, schema: QUEUE_SCHEMA, logger: workerLogger(logger) });
  } finally {
    await pool.end();
  }
}

/** graphile-worker wants both handlers, so a dropped connection is logged instead of crashing the process. */
function queuePool(databaseUrl: string, max: number, logger: Logger): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5000 });
  const warn = (err: Error) => logger.warn({ err: err.message }, 'job queue connection error');
  pool.on('error', warn);
  pool.on('connect', (client) => client.on('error', warn));
  return pool;
}

/** Starts this instance's worker pool for `tasks`; it shares the queue with every other instance. */
export async function startQueue(
  databaseUrl: string,
  deps: TaskDeps,
  tasks: Record<string, TaskHandler>,
  opts: QueueOptions = {},
): Promise<JobQueue> {
  const concurrency = opts.concurrency ?? 2;
  // Its own pool: one connection LISTENs, the rest run jobs; API requests never wait for them.
  const pool = queuePool(databaseUrl, concurrency + 2, deps.logger);
  const taskList: TaskList = {};
  for (const [name, handler] of Object.entries(tasks)) {
    // Each job is its own trace, linked to the one that queued it (src/observability/spans.ts).
    // Jobs are outside any request: a task works across communities under the named bypass
    // (src/db/tenancy.ts), or narrows itself to one community's scope (inCommunity).
    taskList[name] = (payload, helpers) => asOwner(`job ${name}`, deps.logger, () => inJobSpan(name, payload, () => handler(payload, helpers, deps)));
  }
  const liveness = new WorkerLiveness(pool, QUEUE_SCHEMA, deps.logger, opts.staleSeconds ?? 30);
  let runner: Runner;
  try {
    runner = await run({
      events: liveness.events,
      pgPool: pool,
      schema: QUEUE_SCHEMA,
      taskList,
      concurrency,
      pollInterval: opts.pollInterval ?? 1000,
      noHandleSignals: true, // main.ts owns the signals and stops us in order
      parsedCronItems: parseCronItems(opts.schedules ?? []),
      logger: workerLogger(deps.logger),
    });
  } catch (err) {
    await pool.end();
    throw err;
  }
  liveness.start();
  const seconds = opts.statisticsSeconds ?? STATISTICS_REFRESH_SECONDS;
  const statistics = seconds > 0 ? new StatisticsRefresher(pool, deps.logger, seconds * 1000) : undefined;
  statistics?.start();
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= runner
        .stop()
        .then(() => statistics?.stop())
        .then(() => liveness.stop())
        .finally(() => pool.end());
      return stopped;
    },
  };
}

export interface EnqueueOptions {
  /** Not before this time; default now. */
  runAt?: Date;
  /** At most one pending job per key: adding again replaces it (and `removeJob` can cancel it). */
  jobKey?: string;
  maxAttempts?: number;
}

/**
 * Adds a job in the caller's transaction (`em` inside `transactional`): the job exists if and
 * only if the records it works on were committed, so nothing is queued for a failed request.
 */
export async function enqueue(em: EntityManager, task: string, payload: object, opts: EnqueueOptions = {}): Promise<void> {
  // The request's trace context rides along, so the job's trace links back to it.
  const trace = traceCarrier();
  if (trace) payload = { ...payload, _trace: trace };
  await em.execute(
    `select 1 from ${QUEUE_SCHEMA}.add_job(?, ?::json, run_at => ?::timestamptz, max_attempts => ?, job_key => ?)`,
    [task, JSON.stringify(payload), opts.runAt?.toISOString() ?? null, opts.maxAttempts ?? 10, opts.jobKey ?? null],
  );
}

/** Drops the pending job of `jobKey` (a running one is not retried); in the caller's transaction. */
export async function removeJob(em: EntityManager, jobKey: string): Promise<void> {
  await em.execute(`select 1 from ${QUEUE_SCHEMA}.remove_job(?)`, [jobKey]);
}
