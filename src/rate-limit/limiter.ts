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

/**
 * Fixed windows that start at a key's first request (docs/api.md, Rate limits). The counter lives
 * in Redis when configured, else in PostgreSQL; with Redis down, PostgreSQL takes
 * over as insurance so the service keeps counting instead of failing.
 */
export class RequestLimiter {
  private readonly byPoints = new Map<number, RateLimiterAbstract>();

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

  async consume(key: string, points: number): Promise<Verdict> {
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await this.limiter(points).consume(key, 1);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw new StoreUnavailableError('rate limit store unavailable', { cause: err });
      res = err;
      allowed = false;
    }
    return {
      allowed,
      limit: points,
      remaining: Math.max(0, res.remainingPoints),
      reset: Math.ceil((Date.now() + res.msBeforeNext) / 1000),
      retryAfter: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }
}
