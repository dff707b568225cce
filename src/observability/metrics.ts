import { collectDefaultMetrics, Counter, Gauge, Histogram, register, Registry } from 'prom-client';
import type { Pool } from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../logger';
import { poolStats } from '../db/driver-pool';

/**
 * Prometheus metrics (prom-client), one registry per runtime; the process's own metrics
 * (CPU, memory, GC, event-loop lag: prom-client's `collectDefaultMetrics`) live in one
 * process-wide registry, since there is one process. Every label takes values from a closed set
 * (route templates, never paths or ids; task names; outcomes), so the series stay bounded
 * whatever clients send. Gauges that read the database (job queue, outbox) are read when
 * Prometheus scrapes, with one statement each.
 */
export const HTTP_BUCKETS = [0.005, 0.025, 0.1, 0.25, 1, 5];
export const LAG_BUCKETS = [0.1, 1, 5, 30, 300, 3600, 36_000];

let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

type HttpLabels = 'method' | 'route' | 'status_code' | 'api' | 'operation_type';
type DurationLabels = 'method' | 'route' | 'status_class' | 'api' | 'operation_type';

export interface ScrapeSources {
  orm: MikroORM;
  /** The small pg pool of the gate and the rate limiter; scrape-time reads use it too. */
  pool: Pool;
  poolMax: number;
  tasks: string[];
  logger: Logger;
}

export class Metrics {
  readonly registry = new Registry();
  /** Requests by exact status code: error rates per code and route (one series per combination). */
  readonly httpRequests = new Counter<HttpLabels>({
    name: 'http_server_requests_total',
    help: 'HTTP requests answered, by method, route template, status code and API (rest, graphql, other) with the GraphQL operation type',
    labelNames: ['method', 'route', 'status_code', 'api', 'operation_type'],
    registers: [this.registry],
  });
  /**
   * Latency by status class (2xx, 3xx, 4xx, 5xx), not by exact code: a label set of a histogram
   * is 9 series, and the exact 4xx codes a fuzzed client provokes on every route would take
   * the series past 1,000; the counter above has the exact codes.
   */
  readonly httpDuration = new Histogram<DurationLabels>({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template, status class (2xx...) and API with the GraphQL operation type',
    labelNames: ['method', 'route', 'status_class', 'api', 'operation_type'],
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  readonly activeRequests = new Gauge({
    name: 'http_server_active_requests',
    help: 'HTTP requests being served now',
    registers: [this.registry],
  });
  readonly budgetWaits = new Counter({
    name: 'db_caller_budget_waits_total',
    help: 'Database connections a caller had to queue for, because it already held DB_CONNECTIONS_PER_CALLER',
    registers: [this.registry],
  });
  readonly budgetRefusals = new Counter({
    name: 'db_caller_budget_refusals_total',
    help: 'Statements refused (503) after waiting DB_CALLER_WAIT_SECONDS for one of their caller\'s connections',
    registers: [this.registry],
  });
  readonly callerQueueWaits = new Counter({
    name: 'caller_queue_waits_total',
    help: 'Requests that waited in their caller\'s line, because it already had REQUESTS_PER_CALLER in progress',
    registers: [this.registry],
  });
  readonly callerQueueRefusals = new Counter({
    name: 'caller_queue_refusals_total',
    help: 'Requests refused (503) after waiting CALLER_QUEUE_WAIT_SECONDS in their caller\'s line',
    registers: [this.registry],
  });
  readonly rateLimited = new Counter<'reason'>({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused with 429: key_budget (the key\'s hourly allowance), auth_failures (failed key attempts of one address)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly statementsCancelled = new Counter<'reason'>({
    name: 'db_statements_cancelled_total',
    help: 'SQL statements PostgreSQL cancelled: statement_timeout (DB_STATEMENT_TIMEOUT_SECONDS), lock_timeout (DB_LOCK_TIMEOUT_SECONDS)',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter<'outcome'>({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt is scheduled), failed (failed for good)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly webhookLag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From the event\'s delivery record to its successful delivery (retries included)',
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });
  private liveSubscriptions: () => number = () => 0;

  constructor(sources?: ScrapeSources) {
    for (const outcome of ['succeeded', 'retrying', 'failed']) this.webhookDeliveries.inc({ outcome }, 0);
    for (const reason of ['statement_timeout', 'lock_timeout']) this.statementsCancelled.inc({ reason }, 0);
    for (const reason of ['key_budget', 'auth_failures']) this.rateLimited.inc({ reason }, 0);
    const self = this;
    new Gauge({
      name: 'graphql_subscriptions_live',
      help: 'Live GraphQL subscriptions (graphql-ws) on this instance',
      registers: [this.registry],
      collect() {
        this.set(self.liveSubscriptions());
      },
    });
    if (sources) this.databaseGauges(sources);
  }

  /** The live-subscription count, once the WebSocket server exists (Runtime.attach). */
  countSubscriptions(count: () => number): void {
    this.liveSubscriptions = count;
  }

  /** This runtime's metrics, the process's, and prom-client's default registry (the read routing's, src/db/replica-metrics.ts). */
  async text(): Promise<string> {
    const [own, proc, shared] = await Promise.all([this.registry.metrics(), processMetrics().metrics(), register.metrics()]);
    return [own, proc, shared].filter((t) => t.trim()).join('\n');
  }

  readonly contentType = this.registry.contentType;

  private databaseGauges({ orm, pool, poolMax, tasks, logger }: ScrapeSources) {
    new Gauge<'pool' | 'state'>({
      name: 'db_pool_connections',
      help: 'Database connections by pool (orm: requests and jobs\' SQL; gate: keys and rate limits) and state (used, idle)',
      labelNames: ['pool', 'state'],
      registers: [this.registry],
      collect() {
        const p = poolStats(orm.em);
        this.set({ pool: 'orm', state: 'used' }, p?.used ?? 0);
        this.set({ pool: 'orm', state: 'idle' }, p?.idle ?? 0);
        this.set({ pool: 'gate', state: 'used' }, pool.totalCount - pool.idleCount);
        this.set({ pool: 'gate', state: 'idle' }, pool.idleCount);
      },
    });
    new Gauge<'pool'>({
      name: 'db_pool_max',
      help: 'Largest size of each database pool',
      labelNames: ['pool'],
      registers: [this.registry],
      collect() {
        this.set({ pool: 'orm' }, poolMax);
        this.set({ pool: 'gate' }, pool.options.max ?? 10);
      },
    });
    new Gauge<'pool'>({
      name: 'db_pool_waiting',
      help: 'Requests for a connection waiting because the pool is fully used',
      labelNames: ['pool'],
      registers: [this.registry],
      collect() {
        this.set({ pool: 'orm' }, poolStats(orm.em)?.waiting ?? 0);
        this.set({ pool: 'gate' }, pool.waitingCount);
      },
    });

    // One statement per scrape for the queue and one for the outbox, shared by their gauges.
    let queueRead: Promise<QueueRow[]> | undefined;
    const readQueue = () =>
      (queueRead ??= pool
        .query<QueueRow>(QUEUE_SQL)
        .then((r) => r.rows)
        .catch((err: Error) => {
          logger.warn({ err: err.message }, 'metrics: job queue not readable');
          return [];
        })
        .finally(() => setImmediate(() => (queueRead = undefined))));
    const perTask = async (gauge: Gauge<'task'>, pick: (row: QueueRow) => number) => {
      const rows = new Map((await readQueue()).map((r) => [r.task, r]));
      for (const task of tasks) {
        const row = rows.get(task);
        gauge.set({ task }, row ? pick(row) : 0);
      }
    };
    new Gauge<'task'>({
      name: 'job_queue_depth',
      help: 'Jobs waiting or running, per task (graphile-worker); scheduled jobs whose time has not come included',
      labelNames: ['task'],
      registers: [this.registry],
      async collect() {
        await perTask(this, (r) => r.queued);
      },
    });
    new Gauge<'task'>({
      name: 'job_queue_oldest_ready_seconds',
      help: 'Age of the oldest job that is due and not yet taken by a worker, per task (0: none)',
      labelNames: ['task'],
      registers: [this.registry],
      async collect() {
        await perTask(this, (r) => r.oldest);
      },
    });
    new Gauge<'task'>({
      name: 'job_queue_failed',
      help: 'Jobs that used all their attempts and stay in the queue for inspection, per task',
      labelNames: ['task'],
      registers: [this.registry],
      async collect() {
        await perTask(this, (r) => r.failed);
      },
    });

    let outboxRead: Promise<OutboxRow | undefined> | undefined;
    const readOutbox = () =>
      (outboxRead ??= pool
        .query<OutboxRow>(OUTBOX_SQL)
        .then((r) => r.rows[0])
        .catch((err: Error) => {
          logger.warn({ err: err.message }, 'metrics: outbox not readable');
          return undefined;
        })
        .finally(() => setImmediate(() => (outboxRead = undefined))));
    new Gauge({
      name: 'outbox_newest_position',
      help: 'Position of the newest committed event transaction',
      registers: [this.registry],
      async collect() {
        this.set(Number((await readOutbox())?.newest ?? 0));
      },
    });
    new Gauge({
      name: 'outbox_dispatched_position',
      help: 'Newest position up to which every committed event has been turned into webhook deliveries',
      registers: [this.registry],
      async collect() {
        this.set(Number((await readOutbox())?.dispatched ?? 0));
      },
    });
    new Gauge({
      name: 'outbox_lag_seconds',
      help: 'Age of the oldest committed event not yet turned into webhook deliveries (0: none waiting)',
      registers: [this.registry],
      async collect() {
        this.set(Number((await readOutbox())?.lag ?? 0));
      },
    });
  }
}

interface QueueRow {
  task: string;
  queued: number;
  oldest: number;
  failed: number;
}

const QUEUE_SQL = `
  select t.identifier as task,
         count(*) filter (where j.attempts < j.max_attempts)::int as queued,
         coalesce(extract(epoch from now() - min(j.run_at) filter (where j.is_available and j.run_at <= now())), 0)::float8 as oldest,
         count(*) filter (where j.attempts >= j.max_attempts)::int as failed
    from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id
   group by t.identifier`;

interface OutboxRow {
  newest: string;
  dispatched: string;
  lag: number;
}

// Dispatch jobs carry the position they fan out; the oldest one still queued bounds what is done.
const OUTBOX_SQL = `
  with positions as (select case when is_called then last_value else 0 end as newest from event_positions),
       pending as (
         select min((j.payload->>'position')::bigint) as first, min(j.created_at) as since
           from graphile_worker._private_jobs j
           join graphile_worker._private_tasks t on t.id = j.task_id
          where t.identifier = 'webhooks:dispatch' and j.attempts < j.max_attempts)
  select p.newest::text as newest,
         coalesce(pending.first - 1, p.newest)::text as dispatched,
         coalesce(extract(epoch from now() - pending.since), 0)::float8 as lag
    from positions p, pending`;

/** The HTTP methods a label may take; anything else is OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'OTHER');

/** One observation of a finished request: the counter by exact status, the histogram by class. */
export function observeRequest(metrics: Metrics, labels: { method: string; route: string; status: number; api: string; operationType: string }, seconds: number): void {
  const common = { method: methodLabel(labels.method), route: labels.route, api: labels.api, operation_type: labels.operationType };
  metrics.httpRequests.inc({ ...common, status_code: String(labels.status) });
  metrics.httpDuration.observe({ ...common, status_class: `${Math.floor(labels.status / 100)}xx` }, seconds);
}
