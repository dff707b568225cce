import type { Pool } from 'pg';
import type Redis from 'ioredis';
import { parseLsn, positionKey } from '../db/replicas';
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
  /**
   * With `positions` (read-your-writes on replicas, src/db/replicas.ts): the caller's last
   * recorded write position, read with the count of this request (by the counting statement in
   * PostgreSQL, by a GET sent just before it in Redis), so a read learns it without a round trip
   * of its own. 0n: none recorded; undefined: unknown (the read router looks it up).
   */
  position?: bigint;
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
  /** The caller whose write position the count reads too (see `positions`). */
  caller?: string;
  waiting: Waiter[];
}

/** What of rate-limiter-flexible's PostgreSQL limiter the counting statement uses. */
interface PgInternals {
  _getTableIdentifier(): string;
  _query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * rate-limiter-flexible's PostgreSQL limiter with a counting statement of our own: the library's
 * upsert (the SQL of its `_upsert` in 11.4.0, pinned in package.json; same result handling)
 * inside a CTE, which
 * - commits without waiting for the WAL to reach the disk (`synchronous_commit = off` for that
 *   statement's transaction alone): a request does not wait for a disk flush to be counted.
 *   A crash of PostgreSQL may lose the last fraction of a second of counts (wal_writer_delay,
 *   200 ms by default, three times at most), never corrupts them, and nothing else is written in that
 *   transaction (docs/api.md, Rate limits; docs/performance.md, "Decisions", Runtime);
 * - with `consume(..., { caller })`, also reads `caller_wal_positions`, one primary-key lookup,
 *   so the read-your-writes check (src/db/replicas.ts) costs no round trip (docs/scaling.md,
 *   "Read-your-writes").
 */
class CountingPostgresLimiter extends RateLimiterPostgres {
  _upsert(key: string, points: number, msDuration: number, forceExpire = false, options: { caller?: string } = {}) {
    const self = this as unknown as PgInternals;
    if (forceExpire) return (RateLimiterPostgres.prototype as unknown as { _upsert: (...a: unknown[]) => Promise<unknown> })._upsert.call(this, key, points, msDuration, forceExpire, options);
    const table = self._getTableIdentifier();
    const counted = `with lazy as (select set_config('synchronous_commit', 'off', true)),
             counted as (
               insert into ${table} values ($1, $2, $3)
               on conflict (key) do update set
                 points = case when ${table}.expire <= $4 then $2 else ${table}.points + ($2) end,
                 expire = case when ${table}.expire <= $4 then $3 else ${table}.expire end
               returning points, expire)`;
    const values = [key, points, msDuration > 0 ? Date.now() + msDuration : null, Date.now()];
    if (!options.caller) return self._query({ name: 'rlflx-count', text: `${counted} select points, expire from counted, lazy`, values });
    return self._query({
      name: 'rlflx-count-position',
      text: `${counted} select points, expire, (select lsn::text from caller_wal_positions where caller = $5) as lsn from counted, lazy`,
      values: [...values, options.caller],
    });
  }

  _getRateLimiterRes(rlKey: string, changedPoints: number, result: { rows: { lsn?: string | null }[] }): RateLimiterRes {
    const res = (RateLimiterPostgres.prototype as unknown as { _getRateLimiterRes: (...a: unknown[]) => RateLimiterRes })._getRateLimiterRes.call(this, rlKey, changedPoints, result);
    const row = result.rows[0];
    if (row && 'lsn' in row) (res as RateLimiterRes & { position?: bigint }).position = row.lsn ? parseLsn(row.lsn) : 0n;
    return res;
  }
}

/**
 * Fixed windows that start at a key's first request (docs/api.md, Rate limits). The counter lives
 * in Redis when configured, else in PostgreSQL; with Redis down, PostgreSQL takes
 * over as insurance so the service keeps counting instead of failing.
 *
 * A key's concurrent requests are counted together (docs/performance.md, "Decisions", Runtime):
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
    /**
     * Read-your-writes on replicas: each count also reads the caller's last write position
     * (Verdict.position), in the counting statement itself with PostgreSQL, or with Redis by a
     * GET sent alongside the count on the same connection (both answers come back together).
     */
    private readonly positions = false,
  ) {}

  private limiter(points: number): RateLimiterAbstract {
    let limiter = this.byPoints.get(points);
    if (!limiter) {
      const common = { points, duration: this.duration, keyPrefix: this.keyPrefix };
      const pg = new CountingPostgresLimiter({
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

  /**
   * Counts one request of `key`, whose allowance is `points` per window; with `positions`, the
   * verdict carries `caller`'s last write position.
   */
  consume(key: string, points: number, caller?: string): Promise<Verdict> {
    return new Promise<Verdict>((resolve, reject) => {
      const id = `${points} ${key}`;
      const lane = this.lanes.get(id);
      if (lane) {
        lane.waiting.push({ resolve, reject });
        return;
      }
      const fresh: Lane = { key, points, caller: this.positions ? caller : undefined, waiting: [] };
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
      const { redis } = this.stores;
      // With Redis: the position's GET goes with the count (a failed one leaves it unknown: the read router looks it up).
      const looked = lane.caller && redis ? redis.get(positionKey(lane.caller)).then((v) => (v ? BigInt(v) : 0n), () => undefined) : undefined;
      try {
        res = await this.limiter(lane.points).consume(lane.key, n, lane.caller && !redis ? { caller: lane.caller } : {});
      } catch (err) {
        // A RateLimiterRes: over the allowance for some or all of the batch; the counter moved all the same.
        if (err instanceof RateLimiterRes) res = err;
        else failure = new StoreUnavailableError('rate limit store unavailable', { cause: err });
      }
      // Sent before the count on the same connection, the GET has its answer by now.
      const position = looked ? await looked : (res as (RateLimiterRes & { position?: bigint }) | undefined)?.position;
      const next = lane.waiting;
      lane.waiting = [];
      if (next.length === 0) this.lanes.delete(id);
      if (res) {
        const now = Date.now();
        const first = res.consumedPoints - n + 1;
        for (let i = 0; i < n; i++) batch[i].resolve({ ...verdict(lane.points, first + i, res.msBeforeNext, now), ...(position !== undefined ? { position } : {}) });
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
