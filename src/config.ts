import path from 'node:path';
import { parseKey } from './security/secret-box';
import { STATISTICS_REFRESH_SECONDS } from './jobs/statistics';

/** The only reader of process.env: parsed and validated once, at start-up. */
export interface Config {
  nodeEnv: string;
  port: number;
  databaseUrl: string | undefined;
  embeddedPgDir: string;
  embeddedPgPort: number;
  adminToken: string | undefined;
  redisUrl: string | undefined;
  /** Streaming replicas that serve reads (src/db/replicas.ts); empty: every read on the primary. */
  databaseReplicaUrls: string[];
  /** A replica further behind than this gets no reads until it catches up. */
  replicaMaxLagMs: number;
  publicBaseUrl: string | undefined;
  rateLimitPerHour: number;
  authFailuresPerWindow: number;
  authFailureWindowSeconds: number;
  graphqlSandbox: boolean;
  /** REST and /graphql execute through graphql-jit (false: graphql-js's execute, the escape hatch). */
  graphqlJit: boolean;
  logLevel: string;
  dbPoolMax: number;
  /** Pool connections one caller (key or operator) may hold at once (src/db/caller-budget.ts). */
  dbConnectionsPerCaller: number;
  /** Requests of one caller processed at once by an instance while other callers are about; more wait in line (src/http/caller-queue.ts). */
  requestsPerCaller: number;
  /** The same for a caller alone. */
  requestsPerCallerAlone: number;
  /** A caller whose requests lately averaged this long in progress (ms) has one at a time while others are about. */
  heavyCallerMs: number;
  /** How long a request waits in its caller's line before a 503. */
  callerQueueWaitMs: number;
  /** Row-level security on request work (src/db/tenancy.ts); off only to measure its cost. */
  dbRowSecurity: boolean;
  dbCallerWaitMs: number;
  dbStatementTimeoutMs: number;
  dbLockTimeoutMs: number;
  trustProxy: boolean;
  keyCacheTtlMs: number;
  corsOrigins: string[] | '*';
  graphqlMaxDepth: number;
  graphqlMaxCost: number;
  graphqlMaxAliases: number;
  graphqlMaxRootFields: number;
  graphqlMaxDirectives: number;
  graphqlMaxTokens: number;
  /** How deep arrays and objects of a JSON body or GraphQL variables may nest. */
  jsonMaxDepth: number;
  /** graphql-ws: live subscriptions one WebSocket connection may hold. */
  wsMaxSubscriptionsPerConnection: number;
  /** graphql-ws: live subscriptions one API key may hold on this instance. */
  wsMaxSubscriptionsPerKey: number;
  /** graphql-ws: the largest incoming WebSocket message (ws `maxPayload`). */
  wsMaxMessageBytes: number;
  /** graphql-ws: how long a new connection may take to send `connection_init`. */
  wsInitTimeoutMs: number;
  jobConcurrency: number;
  jobStaleSeconds: number;
  statisticsRefreshSeconds: number;
  eventsRetentionDays: number;
  webhookAllowPrivateNetworks: boolean;
  webhookRetryBaseMs: number;
  webhookTimeoutMs: number;
  /** SECRET_ENCRYPTION_KEYS, newest first; empty: the local key file (docs/security.md). */
  secretEncryptionKeys: Buffer[];
  /** Where the local key is kept when SECRET_ENCRYPTION_KEYS is unset: beside the embedded database. */
  secretKeyFile: string;
  /** Prometheus metrics on GET /metrics (src/observability/metrics.ts). */
  metricsEnabled: boolean;
  /** Serve /metrics on this port only (not on PORT); undefined: on PORT. */
  metricsPort: number | undefined;
  /** After SIGTERM: readiness 503 but still serving for this long, then stop accepting and drain. */
  shutdownDelayMs: number;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')}`);
  }
  return raw;
}

/** A comma-separated list of URLs (empty entries ignored), each checked like `url`. */
function urlList(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string[] {
  const entries = (env[name] ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  return entries.map((entry) => url({ [name]: entry }, name, protocols)!);
}

/** `*`, or a comma-separated list of origins; unset: no cross-origin access. */
function corsOrigins(raw: string | undefined): string[] | '*' {
  if (!raw) return [];
  if (raw.trim() === '*') return '*';
  const origins = raw.split(',').map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) throw new ConfigError(`CORS_ORIGINS entry "${origin}" must be an origin like https://app.example.org`);
  }
  return origins;
}

/** SECRET_ENCRYPTION_KEYS: comma-separated base64 keys of 32 bytes, newest first. */
function secretKeys(env: NodeJS.ProcessEnv): Buffer[] {
  const raw = env.SECRET_ENCRYPTION_KEYS;
  if (!raw || !raw.trim()) {
    // A shared database in production needs keys every instance shares: no silent per-host key
    // file. A key file named explicitly (SECRET_KEY_FILE, e.g. on a shared volume) is a choice.
    if (env.DATABASE_URL && env.NODE_ENV === 'production' && !env.SECRET_KEY_FILE) {
      throw new ConfigError('SECRET_ENCRYPTION_KEYS (or an explicit SECRET_KEY_FILE) is required when NODE_ENV=production and DATABASE_URL is set (docs/security.md)');
    }
    return [];
  }
  return raw.split(',').map((k, i) => {
    try {
      return parseKey(k);
    } catch (err) {
      throw new ConfigError(`SECRET_ENCRYPTION_KEYS entry ${i + 1}: ${(err as Error).message}`);
    }
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL "${logLevel}" is not a pino level`);
  }
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']);
  const embeddedPgDir = path.resolve(env.EMBEDDED_PG_DIR || '.data/pg');
  return {
    nodeEnv: env.NODE_ENV || 'development',
    port: int(env, 'PORT', 3000, 0, 65535),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    embeddedPgDir,
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 54329, 1, 65535),
    adminToken,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    databaseReplicaUrls: urlList(env, 'DATABASE_REPLICA_URLS', ['postgres:', 'postgresql:']),
    replicaMaxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 5000, 10, 3_600_000),
    publicBaseUrl: publicBaseUrl?.replace(/\/+$/, ''),
    rateLimitPerHour: int(env, 'RATE_LIMIT_PER_HOUR', 1000, 1, 10_000_000),
    authFailuresPerWindow: int(env, 'AUTH_FAILURES_PER_WINDOW', 300, 1, 1_000_000),
    authFailureWindowSeconds: int(env, 'AUTH_FAILURE_WINDOW_SECONDS', 900, 1, 86_400),
    graphqlSandbox: bool(env, 'GRAPHQL_SANDBOX', true),
    graphqlJit: bool(env, 'GRAPHQL_JIT', true),
    logLevel,
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 200),
    dbConnectionsPerCaller: int(env, 'DB_CONNECTIONS_PER_CALLER', 4, 1, 200),
    requestsPerCaller: int(env, 'REQUESTS_PER_CALLER', 4, 1, 10_000),
    requestsPerCallerAlone: int(env, 'REQUESTS_PER_CALLER_ALONE', 64, 1, 10_000),
    heavyCallerMs: int(env, 'HEAVY_CALLER_MS', 10, 1, 600_000),
    callerQueueWaitMs: int(env, 'CALLER_QUEUE_WAIT_SECONDS', 10, 1, 120) * 1000,
    dbRowSecurity: bool(env, 'DB_ROW_SECURITY', true),
    dbCallerWaitMs: int(env, 'DB_CALLER_WAIT_SECONDS', 5, 1, 60) * 1000,
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
    dbLockTimeoutMs: int(env, 'DB_LOCK_TIMEOUT_SECONDS', 10, 1, 3600) * 1000,
    trustProxy: bool(env, 'TRUST_PROXY', false),
    keyCacheTtlMs: int(env, 'KEY_CACHE_TTL_MS', 5000, 0, 300_000),
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    graphqlMaxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 12, 2, 100),
    graphqlMaxCost: int(env, 'GRAPHQL_MAX_COST', 100_000, 10, 100_000_000),
    graphqlMaxAliases: int(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 10_000),
    graphqlMaxRootFields: int(env, 'GRAPHQL_MAX_ROOT_FIELDS', 10, 1, 10_000),
    graphqlMaxDirectives: int(env, 'GRAPHQL_MAX_DIRECTIVES', 20, 0, 10_000),
    graphqlMaxTokens: int(env, 'GRAPHQL_MAX_TOKENS', 5_000, 100, 1_000_000),
    jsonMaxDepth: int(env, 'JSON_MAX_DEPTH', 64, 2, 1000),
    wsMaxSubscriptionsPerConnection: int(env, 'GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', 20, 1, 10_000),
    wsMaxSubscriptionsPerKey: int(env, 'GRAPHQL_WS_MAX_SUBSCRIPTIONS_PER_KEY', 100, 1, 1_000_000),
    wsMaxMessageBytes: int(env, 'GRAPHQL_WS_MAX_MESSAGE_BYTES', 65_536, 1_024, 16_777_216),
    wsInitTimeoutMs: int(env, 'GRAPHQL_WS_INIT_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
    jobConcurrency: int(env, 'JOB_CONCURRENCY', 2, 1, 64),
    jobStaleSeconds: int(env, 'JOB_WORKER_STALE_SECONDS', 30, 2, 86_400),
    statisticsRefreshSeconds: int(env, 'DB_STATISTICS_REFRESH_SECONDS', STATISTICS_REFRESH_SECONDS, 0, 3_600),
    eventsRetentionDays: int(env, 'EVENTS_RETENTION_DAYS', 30, 1, 3650),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookRetryBaseMs: int(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    secretEncryptionKeys: secretKeys(env),
    secretKeyFile: path.resolve(env.SECRET_KEY_FILE || path.join(path.dirname(embeddedPgDir), 'secret-encryption.key')),
    metricsEnabled: bool(env, 'METRICS_ENABLED', true),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 1, 65535) : undefined,
    shutdownDelayMs: int(env, 'SHUTDOWN_DELAY_SECONDS', 0, 0, 300) * 1000,
  };
}
