import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueryResultRow } from 'pg';

/**
 * The one adapter to the database driver's pool. MikroORM gives no public way to take a
 * connection or to see one being taken, so this file alone reaches into knex's client
 * (`acquireConnection` / `releaseConnection`, knex's private API): named statements
 * (src/db/prepared.ts) take their connection through `withConnection`, and the per-caller
 * connection cap (src/db/caller-budget.ts) wraps every take and give-back through
 * `interceptPool`. MikroORM's read replicas (its `replicas` option: one knex pool each) are
 * reached here too: `replicaConnections` lists them, `interceptPool` covers their pools as well
 * as the primary's, and `routeReads` decides per statement which connection the driver uses
 * (the policy, which replica and when, is src/db/replicas.ts's). A MikroORM or knex upgrade
 * that changes the client or the driver is fixed here.
 */
export interface DriverConnection {
  /** Without a name: an unnamed statement, planned at every call. */
  query<R extends QueryResultRow>(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: R[]; rowCount: number | null; command?: string }>;
}

interface KnexClient {
  acquireConnection(): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<void>;
}

/** One of the ORM's connections (MikroORM's `Connection`): the primary's or a read replica's. */
export interface OrmConnection {
  execute(q: unknown, params?: unknown[], method?: string, ctx?: unknown, loggerContext?: unknown): Promise<unknown>;
  getKnex(): unknown;
}

/** What of MikroORM's PostgreSQL driver the routing uses (`replicas` is its list of replica connections). */
interface OrmDriver {
  getConnection(type?: 'read' | 'write'): OrmConnection;
  execute(q: unknown, params?: unknown[], method?: string, ctx?: unknown, loggerContext?: unknown): Promise<unknown>;
  rethrow<T>(promise: Promise<T>): Promise<T>;
  replicas: OrmConnection[];
}

const driverOf = (em: Pick<EntityManager, 'getDriver'>): OrmDriver => em.getDriver() as unknown as OrmDriver;

const clientOf = (connection: OrmConnection): KnexClient => (connection.getKnex() as { client: KnexClient }).client;

const poolClient = (em: Pick<EntityManager, 'getConnection'>): KnexClient => clientOf(em.getConnection() as unknown as OrmConnection);

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The primary pool's connections in use, idle, and requests waiting for one (metrics); undefined before the pool exists. */
export function poolStats(em: Pick<EntityManager, 'getConnection'>): { used: number; idle: number; waiting: number } | undefined {
  const pool = (poolClient(em) as unknown as { pool?: TarnPool }).pool;
  return pool && { used: pool.numUsed(), idle: pool.numFree(), waiting: pool.numPendingAcquires() };
}

/** The read replicas' connections the ORM opened (its `replicas` option), in the order of their URLs. */
export const replicaConnections = (em: Pick<EntityManager, 'getDriver'>): OrmConnection[] => driverOf(em).replicas;

/**
 * Runs `use` on em's connection: inside a transaction (`em.getTransactionContext()`) the
 * transaction's own (its client hands it out and never gives it back), else one taken from
 * the pool (`from`'s, a replica's connection; by default em's) and given back after, exactly
 * as `em.execute` does (so the caller budget and the pool's per-connection timeouts apply alike).
 */
export async function withConnection<T>(em: EntityManager, use: (connection: DriverConnection) => Promise<T>, from?: OrmConnection): Promise<T> {
  const trx = em.getTransactionContext<{ client: KnexClient }>();
  const client = trx ? trx.client : from ? clientOf(from) : poolClient(em);
  const connection = await client.acquireConnection();
  try {
    return await use(connection);
  } finally {
    if (!trx) await client.releaseConnection(connection);
  }
}

export interface PoolHooks {
  /** Called for every connection the pool is asked for; `take` takes it. */
  acquire(take: () => Promise<DriverConnection>): Promise<DriverConnection>;
  /** Called for every connection given back; `giveBack` gives it back. */
  release(connection: DriverConnection, giveBack: () => Promise<void>): Promise<void>;
}

/**
 * Puts `hooks` around every take from and give-back to the ORM's pools, the primary's and
 * each read replica's (transactions' connections included).
 */
export function interceptPool(em: Pick<EntityManager, 'getDriver'>, hooks: PoolHooks): void {
  const driver = driverOf(em);
  for (const connection of [driver.getConnection('write'), ...driver.replicas]) {
    const client = clientOf(connection);
    const acquire = client.acquireConnection.bind(client);
    const release = client.releaseConnection.bind(client);
    client.acquireConnection = () => hooks.acquire(acquire);
    client.releaseConnection = (conn) => hooks.release(conn, () => release(conn));
  }
}

/** Which connection the driver uses for each statement (src/db/replicas.ts decides). */
export interface ReadRouting<R extends { readonly connection: OrmConnection }> {
  /** The replicas, each with one of `replicaConnections`. */
  readonly replicas: readonly R[];
  /** The replica the current scope reads from; null: the primary. */
  current(): R | null;
  /** True when a transaction opened now is a read-only one to open on `current()`. */
  inTransaction(): boolean;
  /** A statement failed on `replica` outside a transaction: true runs it again on the primary, false throws its error. */
  failed(replica: R, err: unknown): boolean;
}

/**
 * Teaches MikroORM's driver the routing: `getConnection('read')` (the ORM's finds outside a
 * transaction) and `execute` outside a transaction use `current()`; a transaction opens on the
 * primary unless `inTransaction()`. Outside a routed scope, 'read' means the primary too:
 * MikroORM's own choice would be a random replica, with no regard for health, lag or the
 * caller's writes. Every statement a replica runs outside a transaction (the query builder,
 * `em.execute`) runs again on the primary when it fails there and `failed` says so.
 */
export function routeReads<R extends { readonly connection: OrmConnection }>(em: Pick<EntityManager, 'getDriver'>, routing: ReadRouting<R>): void {
  const driver = driverOf(em);
  const getConnection = driver.getConnection.bind(driver);
  const execute = driver.execute.bind(driver);
  const primary = getConnection('write');
  for (const replica of routing.replicas) {
    const connection = replica.connection;
    const run = connection.execute.bind(connection);
    connection.execute = (q, params, method, ctx, loggerContext) => {
      if (ctx) return run(q, params, method, ctx, loggerContext);
      return run(q, params, method, ctx, loggerContext).catch((err: unknown) => {
        if (!routing.failed(replica, err)) throw err;
        return primary.execute(q, params, method, undefined, loggerContext);
      });
    };
  }
  driver.getConnection = (type = 'write') => {
    const replica = routing.current();
    if (replica && (type === 'read' || routing.inTransaction())) return replica.connection;
    return getConnection('write');
  };
  driver.execute = (q, params, method, ctx, loggerContext) => {
    const replica = ctx ? null : routing.current();
    if (!replica) return execute(q, params, method, ctx, loggerContext);
    return driver.rethrow(replica.connection.execute(q, params, method, undefined, loggerContext));
  };
}
