import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLimiter, StoreUnavailableError, type Stores, type Verdict } from '../../src/rate-limit/limiter';
import { freePort } from '../helpers/process';
import { redisAvailable } from '../helpers/redis';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The limiter counts a key's concurrent requests together (src/rate-limit/limiter.ts): one
 * store call for all requests that arrived while the previous one was in flight, and each
 * request answered as if it had been counted alone. On the real stores.
 */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Counts the calls of a store client's method as they pass through to it. */
function callsOf(client: object, method: string): { n: number; stop(): void } {
  const c = client as Record<string, (...args: unknown[]) => unknown>;
  const original = c[method];
  const calls = {
    n: 0,
    stop: () => void (c[method] = original),
  };
  c[method] = function (this: unknown, ...args: unknown[]) {
    calls.n++;
    return original.apply(this, args);
  };
  return calls;
}

const brief = (v: Verdict) => ({ allowed: v.allowed, limit: v.limit, remaining: v.remaining });

const stores: [string, boolean][] = [
  ['PostgreSQL', true],
  ['Redis', await redisAvailable(redisUrl)],
];

describe.each(stores)('a key\'s concurrent requests counted together (%s store)', (name, available) => {
  let pool: Pool;
  let redis: Redis | undefined;
  let prefix: string;
  const limiter = () => new RequestLimiter(name === 'Redis' ? { pg: pool, redis } : { pg: pool }, prefix);
  /** Store calls of the counter: the pool's queries, or the Redis increment script. */
  const storeCalls = (l: RequestLimiter) => {
    if (name !== 'Redis') return callsOf(pool, 'query');
    void l; // RateLimiterRedis defines its command on the client when built, so count after the limiter's first use
    return callsOf(redis!, 'rlflxIncr');
  };
  const counter = async (key: string) =>
    name === 'Redis'
      ? Number(await redis!.get(`${prefix}:${key}`))
      : Number((await pool.query('select points from rate_limits where key = $1', [`${prefix}:${key}`])).rows[0]?.points);

  beforeAll(async () => {
    if (!available) return;
    pool = new Pool({ connectionString: testDatabaseUrl(), max: 5 });
    if (name === 'Redis') redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    if (redis) await new Promise((resolve) => redis!.once('ready', resolve));
  });
  afterAll(async () => {
    await pool?.end();
    redis?.disconnect();
  });

  it.runIf(available)('a batch straddling the limit: one store call, exactly the limit passes, each answer its position\'s', async () => {
    prefix = `rl-batch-${randomUUID()}`;
    const l = limiter();
    // Two requests one after the other: positions 1 and 2 of 5.
    expect(brief(await l.consume('k', 5))).toEqual({ allowed: true, limit: 5, remaining: 4 });
    expect(brief(await l.consume('k', 5))).toEqual({ allowed: true, limit: 5, remaining: 3 });
    const calls = storeCalls(l);
    try {
      // Six at once: the first goes to the store alone (position 3), the other five wait for it
      // and go together as one increment of 5 (positions 4 to 8).
      const verdicts = await Promise.all(Array.from({ length: 6 }, () => l.consume('k', 5)));
      expect(calls.n).toBe(2);
      expect(verdicts.map(brief)).toEqual([
        { allowed: true, limit: 5, remaining: 2 },
        { allowed: true, limit: 5, remaining: 1 },
        { allowed: true, limit: 5, remaining: 0 },
        { allowed: false, limit: 5, remaining: 0 },
        { allowed: false, limit: 5, remaining: 0 },
        { allowed: false, limit: 5, remaining: 0 },
      ]);
      const now = Date.now() / 1000;
      for (const v of verdicts) {
        expect(v.reset).toBeGreaterThanOrEqual(Math.floor(now) + 3590);
        expect(v.reset).toBeLessThanOrEqual(Math.ceil(now) + 3600);
        expect(v.retryAfter).toBeGreaterThan(3590);
        expect(v.retryAfter).toBeLessThanOrEqual(3600);
      }
      expect(Math.max(...verdicts.map((v) => v.reset)) - Math.min(...verdicts.map((v) => v.reset))).toBeLessThanOrEqual(1);
    } finally {
      calls.stop();
    }
    // Refused requests count too, as they did one by one: the counter is at 8.
    expect(await counter('k')).toBe(8);
    expect(brief(await l.consume('k', 5))).toEqual({ allowed: false, limit: 5, remaining: 0 });
  });

  it.runIf(available)('answers exactly what counting one request at a time answers', async () => {
    prefix = `rl-batch-${randomUUID()}`;
    const together = limiter();
    const together40 = await Promise.all(Array.from({ length: 40 }, () => together.consume('together', 25)));
    const alone: Verdict[] = [];
    for (let i = 0; i < 40; i++) alone.push(await together.consume('alone', 25));
    expect(together40.map(brief)).toEqual(alone.map(brief));
    expect(together40.filter((v) => v.allowed)).toHaveLength(25);
    expect(await counter('together')).toBe(40);
    expect(await counter('alone')).toBe(40);
  });

  it.runIf(available)('two limiters (as two instances) on their own connections share one budget exactly', async () => {
    prefix = `rl-batch-${randomUUID()}`;
    const pool2 = new Pool({ connectionString: testDatabaseUrl(), max: 5 });
    const redis2 = name === 'Redis' ? new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : undefined;
    if (redis2) await new Promise((resolve) => redis2.once('ready', resolve));
    try {
      const instances = [limiter(), new RequestLimiter(redis2 ? { pg: pool2, redis: redis2 } : { pg: pool2 }, prefix)];
      const verdicts: Verdict[] = [];
      // Waves of concurrent requests on both, so their batches interleave in the store.
      for (let wave = 0; wave < 4; wave++) {
        const all = await Promise.all(Array.from({ length: 40 }, (_, i) => instances[i % 2].consume('shared', 100)));
        verdicts.push(...all);
      }
      const passed = verdicts.filter((v) => v.allowed);
      expect(passed).toHaveLength(100);
      expect(passed.map((v) => v.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect(verdicts.filter((v) => !v.allowed).every((v) => v.remaining === 0)).toBe(true);
      expect(await counter('shared')).toBe(160);
    } finally {
      await pool2.end();
      redis2?.disconnect();
    }
  });
});

describe('store failures', () => {
  it('a store that cannot be reached fails every request of the batch, and the key is not left waiting', async () => {
    const dead = new Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none`, max: 1, connectionTimeoutMillis: 2000 });
    dead.on('error', () => undefined);
    try {
      const l = new RequestLimiter({ pg: dead }, `rl-batch-${randomUUID()}`);
      const first = await Promise.allSettled(Array.from({ length: 3 }, () => l.consume('k', 5)));
      for (const r of first) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      }
      // The next request goes to the store again (no batch is stuck in flight) and fails the same way.
      await expect(l.consume('k', 5)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await dead.end();
    }
  });

  it('Redis unreachable: a batch is counted in PostgreSQL (the insurance store), exactly', async () => {
    const pool = new Pool({ connectionString: testDatabaseUrl(), max: 5 });
    // A real client to a port nobody listens on: every command fails, as with Redis down.
    const redis = new Redis(`redis://127.0.0.1:${await freePort()}`, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 1000 });
    redis.on('error', () => undefined);
    const prefix = `rl-batch-${randomUUID()}`;
    try {
      const l = new RequestLimiter({ pg: pool, redis }, prefix);
      const verdicts = await Promise.all(Array.from({ length: 6 }, () => l.consume('k', 4)));
      expect(verdicts.map((v) => v.allowed)).toEqual([true, true, true, true, false, false]);
      expect(verdicts.map((v) => v.remaining)).toEqual([3, 2, 1, 0, 0, 0]);
      expect((await pool.query('select points from rate_limits where key = $1', [`${prefix}:k`])).rows[0].points).toBe(6);
    } finally {
      redis.disconnect();
      await pool.end();
    }
  });
});

describe('the PostgreSQL count\'s commit', () => {
  it('does not wait for the WAL flush: synchronous_commit is off for the counting transaction alone', async () => {
    // The sessions wait for the flush (a test server may run with synchronous_commit off throughout).
    const pool = new Pool({ connectionString: testDatabaseUrl(), max: 1, options: '-c synchronous_commit=on' });
    const prefix = `rl-commit-${randomUUID()}`;
    // A deferred constraint trigger runs at COMMIT: it records the setting the commit runs under.
    await pool.query(`create table if not exists rl_commit_modes (key text, mode text);
      create or replace function rl_commit_mode() returns trigger language plpgsql as $$
        begin insert into rl_commit_modes values (new.key, current_setting('synchronous_commit')); return null; end $$;
      drop trigger if exists rl_commit_mode on rate_limits;
      create constraint trigger rl_commit_mode after insert or update on rate_limits deferrable initially deferred
        for each row when (new.key like 'rl-commit-%') execute function rl_commit_mode();`);
    try {
      const positioned = new RequestLimiter({ pg: pool }, prefix, 3600, true);
      await new RequestLimiter({ pg: pool }, prefix).consume('k', 10);
      await positioned.consume('k', 10, 'caller-1');
      const modes = await pool.query<{ mode: string }>('select mode from rl_commit_modes where key = $1', [`${prefix}:k`]);
      expect(modes.rows.map((r) => r.mode)).toEqual(['off', 'off']);
      // The connection's own setting is untouched: its next transaction waits for the flush again.
      expect((await pool.query<{ synchronous_commit: string }>('show synchronous_commit')).rows[0].synchronous_commit).toBe('on');
    } finally {
      await pool.query('drop trigger if exists rl_commit_mode on rate_limits; drop function if exists rl_commit_mode(); drop table if exists rl_commit_modes');
      await pool.end();
    }
  });
});
