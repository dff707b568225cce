import type { EntityManager } from '@mikro-orm/postgresql';
import type { QueryResultRow } from 'pg';

/**
 * The one way a service opens a transaction: `transaction(em, (tem) => ...)`.
 *
 * Most requests have no transaction yet and get one (MikroORM's `transactional`: BEGIN,
 * the work, a flush, COMMIT). An idempotent REST POST (src/rest/idempotency.ts) already
 * runs its single operation in the transaction that also stores the answer, and any error
 * rolls all of it back; there the operation JOINS that transaction (`joinTransaction`)
 * instead of nesting a savepoint in it: SAVEPOINT and RELEASE were two round trips of
 * every keyed POST for a rollback point nobody used (docs/performance.md, "Safe retries").
 * GraphQL mutations with a key keep nesting: several mutation fields share one transaction
 * and a failed field must not take the others' effects with it.
 *
 * A joined operation cannot retry on its own (after a deadlock the whole transaction is
 * aborted): `isJoined` tells retry loops to let the error through to the outermost
 * transaction, which retries as a whole (runIdempotent).
 */
const joined = new WeakSet<object>();

/** Marks em's transaction as one whose operations join it (see above). */
export function joinTransaction(em: EntityManager): void {
  const trx = em.getTransactionContext();
  if (trx) joined.add(trx);
}

export function isJoined(em: EntityManager): boolean {
  const trx = em.getTransactionContext();
  return Boolean(trx && joined.has(trx));
}

export async function transaction<T>(em: EntityManager, work: (tem: EntityManager) => Promise<T>): Promise<T> {
  if (!isJoined(em)) return em.transactional(work);
  const result = await work(em);
  await em.flush();
  return result;
}

interface PgConnection {
  query<R extends QueryResultRow>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[]; rowCount: number | null }>;
}
interface KnexTransaction {
  client: { acquireConnection(): Promise<PgConnection> };
}

/**
 * A named (prepared) statement on the connection of em's transaction: PostgreSQL parses
 * and plans it once per connection instead of once per call (MikroORM inlines parameters
 * into fresh SQL text). `$1`-style parameters. The statement is announced like any of the
 * ORM's (knex's `query` event), so SQL counts and logs still see it.
 */
export async function prepared<R extends QueryResultRow>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<{ rows: R[]; rowCount: number }> {
  const trx = em.getTransactionContext<KnexTransaction>();
  if (!trx) throw new Error(`prepared statement ${name} needs a transaction`);
  const connection = await trx.client.acquireConnection(); // the transaction's own connection
  em.getConnection().getKnex().emit('query', { sql: text, bindings: values, name });
  const res = await connection.query<R>({ name, text, values });
  return { rows: res.rows, rowCount: res.rowCount ?? 0 };
}
