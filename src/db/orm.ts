import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities';
import { migrationsList } from './migrations';

/** Per-statement limits of every connection of the ORM's pool (requests and jobs). */
export interface DbTimeouts {
  /** A statement running longer is cancelled (57014): 503, never a held connection. */
  statementMs: number;
  /** Waiting longer for a row or table lock fails the statement (55P03): 503, try again. */
  lockMs: number;
}

export const DEFAULT_TIMEOUTS: DbTimeouts = { statementMs: 30_000, lockMs: 10_000 };

export function ormOptions(databaseUrl: string, poolMax = 10, timeouts: DbTimeouts = DEFAULT_TIMEOUTS, replicaUrls: string[] = []): Options {
  return {
    clientUrl: databaseUrl,
    // MikroORM's read replicas: a knex pool per replica with the options below; which one serves
    // a read is decided by src/db/replicas.ts (health, lag, the caller's last write).
    replicas: replicaUrls.map((clientUrl, i) => ({ name: `replica${i}`, clientUrl })),
    entities,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: poolMax, acquireTimeoutMillis: 5000 },
    // With the database down, requests fail fast (503) instead of hanging.
    driverOptions: {
      acquireConnectionTimeout: 5000,
      // Sent with the connection's start-up packet: no extra round trip per request.
      connection: { connectionTimeoutMillis: 3000, statement_timeout: timeouts.statementMs, lock_timeout: timeouts.lockMs },
    },
    // The rate limiter's table is owned by rate-limiter-flexible's query shape; the job
    // queue's schema by graphile-worker's own migrations (src/jobs/queue.ts); the write
    // positions of read-your-writes by src/db/replicas.ts (no entity: plain statements).
    schemaGenerator: { skipTables: ['rate_limits', 'caller_wal_positions'], ignoreSchema: ['graphile_worker'] },
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  };
}

export async function openOrm(databaseUrl: string, poolMax?: number, migrate = true, timeouts?: DbTimeouts, replicaUrls?: string[]): Promise<MikroORM> {
  const orm = await MikroORM.init(ormOptions(databaseUrl, poolMax, timeouts, replicaUrls));
  if (migrate) await orm.getMigrator().up();
  return orm;
}
