import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueryResultRow } from 'pg';

/**
 * The one adapter to the database driver's pool. MikroORM gives no public way to take a
 * connection or to see one being taken, so this file alone reaches into knex's client
 * (`acquireConnection` / `releaseConnection`, knex's private API): named statements
 * (src/db/prepared.ts) take their connection through `withConnection`, and the per-caller
 * connection cap (src/db/caller-budget.ts) wraps every take and give-back through
 * `interceptPool`. A MikroORM or knex upgrade that changes the client is fixed here.
 */
export interface DriverConnection {
  query<R extends QueryResultRow>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[]; rowCount: number | null }>;
}

interface KnexClient {
  acquireConnection(): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<void>;
}

const poolClient = (em: Pick<EntityManager, 'getConnection'>): KnexClient =>
  (em.getConnection().getKnex() as unknown as { client: KnexClient }).client;

/**
 * Runs `use` on em's connection: inside a transaction (`em.getTransactionContext()`) the
 * transaction's own (its client hands it out and never gives it back), else one taken from
 * the pool and given back after, exactly as `em.execute` does (so the caller budget and the
 * pool's per-connection timeouts apply alike).
 */
export async function withConnection<T>(em: EntityManager, use: (connection: DriverConnection) => Promise<T>): Promise<T> {
  const trx = em.getTransactionContext<{ client: KnexClient }>();
  const client = trx ? trx.client : poolClient(em);
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

/** Puts `hooks` around every take from and give-back to the ORM's pool (transactions' connections included). */
export function interceptPool(em: Pick<EntityManager, 'getConnection'>, hooks: PoolHooks): void {
  const client = poolClient(em);
  const acquire = client.acquireConnection.bind(client);
  const release = client.releaseConnection.bind(client);
  client.acquireConnection = () => hooks.acquire(acquire);
  client.releaseConnection = (connection) => hooks.release(connection, () => release(connection));
}
