import type { Pool } from 'pg';
import type Redis from 'ioredis';
import { RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

const HOUR = 3600;
const TABLE = 'rate_limits';

export interface Stores {
  pg: Pool;
  redis?: Redis;
}

export interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** UTC epoch seconds when the window ends. */
  reset: number;
  retryAfter: number;
}

export class StoreUnavailableError extends Error {}

interface Waiter {
  resolve(verdict: Verdict): void;
  reject(err: unknown): void;
}

/** One key's requests (at one allowance) in this process: at most one store call in flight, the others wait for it together. */
interface Lane {
  key: string;
  points: number;
  waiting: Waiter[];
}

/**
 * Fixed windows that start at a key's first request (docs/api.md, Rate limits). The counter lives
 * in Redis when configured, else in PostgreSQL; with Redis down, PostgreSQL takes
 * over as insurance so the service keeps counting instead of failing.
 *
 * A key's concurrent requests are counted together (docs/performance.md, "Rate limiter"):
 * while one store call for a key is in flight in this process, the key's later requests
 * wait, and then go as one `consume(key, n)`, a single atomic increment by n. The store
 * answers the counter after the increment, c, so the batch held positions c-n+1 .. c in
 * the window, in arrival order; each request gets the verdict and headers of its own
 * position, exactly what n separate increments would have answered. Other processes'
 * increments land before or after the batch, never inside it, so the budget stays exact
 * across instances.
 */
export class RequestLimiter {
  private readonly byPoints = new Map<number, RateLimiterAbstract>();
  /** Lanes with a store call in flight, by `${points} ${key}`; a lane is removed once nothing waits. */
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly stores: Stores,
    private readonly keyPrefix: string,
    private readonly duration = HOUR,
  ) {}

  private limiter(points: number): RateLimiterAbstract {
    let limiter = this.byPoints.get(points);
    if (!limiter) {
      const common = { points, duration: this.duration, keyPrefix: this.keyPrefix };
      const pg = new RateLimiterPostgres({
        ...common,
        storeClient: this.stores.pg,
        storeType: 'pool',
        tableName: TABLE,
        tableCreated: true,
        clearExpiredByTimeout: false,
      });
      limiter = this.stores.redis
        ? new RateLimiterRedis({ ...common, storeClient: this.stores.redis, insuranceLimiter: pg, rejectIfRedisNotReady: true })
        : pg;
      this.byPoints.set(points, limiter);
    }
    return limiter;
  }

  /** Counts one request of `key`, whose allowance is `points` per window. */
  consume(key: string, points: number): Promise<Verdict> {
    return new Promise<Verdict>((resolve, reject) => {
      const id = `${points} ${key}`;
      const lane = this.lanes.get(id);
      if (lane) {
        lane.waiting.push({ resolve, reject });
        return;
      }
      const fresh: Lane = { key, points, waiting: [] };
      this.lanes.set(id, fresh);
      void this.run(id, fresh, [{ resolve, reject }]);
    });
  }

  /**
   * Sends `batch` as one increment and answers each of its requests; meanwhile arrived requests
   * are the next batch. The lane is given up before answering, so a request made after an
   * answer starts a store call of its own instead of joining a finished batch.
   */
  private async run(id: string, lane: Lane, batch: Waiter[]): Promise<void> {
    for (;;) {
      const n = batch.length;
      let res: RateLimiterRes | undefined;
      let failure: StoreUnavailableError | undefined;
      try {
        res = await this.limiter(lane.points).consume(lane.key, n);
      } catch (err) {
        // A RateLimiterRes: over the allowance for some or all of the batch; the counter moved all the same.
        if (err instanceof RateLimiterRes) res = err;
        else failure = new StoreUnavailableError('rate limit store unavailable', { cause: err });
      }
      const next = lane.waiting;
      lane.waiting = [];
      if (next.length === 0) this.lanes.delete(id);
      if (res) {
        const now = Date.now();
        const first = res.consumedPoints - n + 1;
        for (let i = 0; i < n; i++) batch[i].resolve(verdict(lane.points, first + i, res.msBeforeNext, now));
      } else {
        for (const w of batch) w.reject(failure);
      }
      if (next.length === 0) return;
      batch = next;
    }
  }
}

/** The answer to the request that holds `position` in its key's window (1 = the window's first). */
export function verdict(limit: number, position: number, msBeforeNext: number, now = Date.now()): Verdict {
  return {
    allowed: position <= limit,
    limit,
    remaining: Math.max(0, limit - position),
    reset: Math.ceil((now + msBeforeNext) / 1000),
    retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  };
}
