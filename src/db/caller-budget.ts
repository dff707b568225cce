import { AsyncLocalStorage } from 'node:async_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import { BusyError } from '../errors/classify';
import { interceptPool } from './driver-pool';

/**
 * A cap on the pool connections one caller (one API key, or the operator) holds at once,
 * so a caller whose documents fan out into many statements queues behind itself instead of
 * taking the whole pool from every other community.
 *
 * Request work runs inside `callerScope.run({ key }, ...)` (the REST facade around its
 * operation, app.ts around /graphql); every connection knex takes from the pool inside it
 * first takes one of the caller's slots, and gives it back with the connection. Work outside
 * a scope (jobs, the gate, migrations) is not capped. A caller that waits longer than
 * `waitMs` for a slot gets a BusyError (503 with Retry-After, errors/classify.ts).
 *
 * The cap is per process, on purpose: it guards this process's pool, which is itself per
 * process; nothing about it has to agree across instances (the hourly budget, which does,
 * lives in PostgreSQL or Redis).
 */
export interface CallerScope {
  /** Set once the caller is known (GraphQL learns it after the body is read). */
  key?: string;
  /** The caller's community: the database's tenancy setting for the request's work (src/db/tenancy.ts). */
  communityId?: string;
  /** Why this request spans communities (the operator): the database's tenancy is bypassed, logged. */
  bypass?: string;
}

export const callerScope = new AsyncLocalStorage<CallerScope>();

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

class Slots {
  held = 0;
  readonly waiters: Waiter[] = [];
}

/** Counters of waits and refusals (the runtime's metrics). */
export interface BudgetObserver {
  waited(): void;
  refused(): void;
}

export class CallerBudget {
  private readonly slots = new Map<string, Slots>();

  constructor(
    readonly perCaller: number,
    readonly waitMs: number,
    private readonly observer?: BudgetObserver,
  ) {}

  /** Connections `key` holds now (tests and the bench read it). */
  held(key: string): number {
    return this.slots.get(key)?.held ?? 0;
  }

  acquire(key: string): Promise<void> {
    let s = this.slots.get(key);
    if (!s) this.slots.set(key, (s = new Slots()));
    if (s.held < this.perCaller) {
      s.held++;
      return Promise.resolve();
    }
    const slots = s;
    this.observer?.waited();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = slots.waiters.indexOf(waiter);
          if (at >= 0) slots.waiters.splice(at, 1);
          this.observer?.refused();
          reject(new BusyError('This API key has too many database operations in progress; try again shortly.'));
        }, this.waitMs),
      };
      slots.waiters.push(waiter);
    });
  }

  release(key: string): void {
    const s = this.slots.get(key);
    if (!s) return;
    const next = s.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve(); // the slot passes on: held stays the same
      return;
    }
    s.held--;
    if (s.held <= 0) this.slots.delete(key);
  }
}

/** Puts `budget` in front of the ORM's pools, the primary's and each read replica's (see CallerBudget), through the driver-pool adapter. */
export function installCallerBudget(orm: MikroORM, budget: CallerBudget): void {
  const owner = new WeakMap<object, string>();
  interceptPool(orm.em, {
    async acquire(take) {
      const key = callerScope.getStore()?.key;
      if (key === undefined) return take();
      await budget.acquire(key);
      try {
        const connection = await take();
        owner.set(connection, key);
        return connection;
      } catch (err) {
        budget.release(key);
        throw err;
      }
    },
    async release(connection, giveBack) {
      const key = owner.get(connection);
      owner.delete(connection);
      try {
        return await giveBack();
      } finally {
        if (key !== undefined) budget.release(key);
      }
    },
  });
}
