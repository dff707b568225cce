import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities';
import { migrationsList } from './migrations';

export function ormOptions(databaseUrl: string, poolMax = 10): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: poolMax, acquireTimeoutMillis: 5000 },
    // With the database down, requests fail fast (503) instead of hanging.
    driverOptions: {
      acquireConnectionTimeout: 5000,
      connection: { connectionTimeoutMillis: 3000, statement_timeout: 30_000 },
    },
    // The rate limiter's table is owned by rate-limiter-flexible's query shape; the job
    // queue's schema by graphile-worker's own migrations (src/jobs/queue.ts).
    schemaGenerator: { skipTables: ['rate_limits'], ignoreSchema: ['graphile_worker'] },
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  };
}

export async function openOrm(databaseUrl: string, poolMax?: number, migrate = true): Promise<MikroORM> {
  const orm = await MikroORM.init(ormOptions(databaseUrl, poolMax));
  if (migrate) await orm.getMigrator().up();
  return orm;
}
