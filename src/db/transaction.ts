import { DeadlockException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currentReplica, inReplicaTransaction, replicaFailed } from './replicas';

/**
 * The one way a service opens a transaction: `transaction(em, (tem) => ...)`.
 *
 * Most requests have no transaction yet and get one (MikroORM's `transactional`: BEGIN,
 * the work, a flush, COMMIT). An idempotent REST POST (src/http/idempotency.ts) already
 * runs its single operation in the transaction that also stores the answer, and any error
 * rolls all of it back; there the operation JOINS that transaction (`joinTransaction`)
 * instead of nesting a savepoint in it: SAVEPOINT and RELEASE were two round trips of
 * every keyed POST for a rollback point nobody used (docs/performance.md, "Decisions").
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

/**
 * A read-only transaction: on the read scope's replica when the request reads from one
 * (src/db/replicas.ts), else on the primary, joining a transaction already open. It goes
 * through `transaction` like every other one, so whatever a transaction starts with runs on
 * the replica too; only the connection it is opened on differs.
 */
export async function readTransaction<T>(em: EntityManager, work: (tem: EntityManager) => Promise<T>): Promise<T> {
  const replica = em.getTransactionContext() ? null : currentReplica();
  if (!replica) return transaction(em, work);
  try {
    return await inReplicaTransaction(() => transaction(em, work));
  } catch (err) {
    if (!replicaFailed(replica, err)) throw err;
    // a read changes nothing: once more, on the primary
    return transaction(em, work);
  }
}

/**
 * The one retry policy for work PostgreSQL aborted (a deadlock rolls the whole transaction
 * back, so running it again is safe): up to DEADLOCK_ATTEMPTS attempts, each after a short
 * randomised pause that grows with the attempt (10-50 ms, 20-100 ms, ...) so two transactions
 * that deadlocked do not collide again in step. `retryable` widens what counts (default: a
 * deadlock). The last error goes to the caller (classify: 503 with Retry-After).
 */
export const DEADLOCK_ATTEMPTS = 6;

export const isDeadlock = (err: unknown): boolean => err instanceof DeadlockException;

export async function retryDeadlocks<T>(attempt: () => Promise<T>, retryable: (err: unknown) => boolean = isDeadlock): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!retryable(err) || tries >= DEADLOCK_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, tries * (10 + Math.random() * 40)));
    }
  }
}

/**
 * `transaction(em, work)`, run again after a deadlock (retryDeadlocks). Inside a joined
 * transaction it runs once: the error aborts the whole transaction, whose owner retries it.
 */
export function withDeadlockRetry<T>(em: EntityManager, work: (tem: EntityManager) => Promise<T>, retryable: (err: unknown) => boolean = isDeadlock): Promise<T> {
  if (isJoined(em)) return transaction(em, work);
  return retryDeadlocks(() => transaction(em, work), retryable);
}
