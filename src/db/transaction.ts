import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The one way a service opens a transaction: `transaction(em, (tem) => ...)`.
 *
 * Most requests have no transaction yet and get one (MikroORM's `transactional`: BEGIN,
 * the work, a flush, COMMIT). An idempotent REST POST (src/http/idempotency.ts) already
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
