/**
 * The rate limiter alone: `node -r @swc-node/register bench/limiter.ts` (docs/performance.md,
 * "Decisions"). `LIMITER_CONCURRENCY` (64) callers count `LIMITER_REQUESTS` (20,000) requests
 * of one key, each sending its next request as soon as its last one is answered, as the
 * bench's connections do, in `LIMITER_ROUNDS` (3) rounds of these arms, order rotated:
 *  - `library`: rate-limiter-flexible's RateLimiterPostgres, one upsert per request (the
 *    service before requests of a key were counted together);
 *  - `own`: a prepared upsert of our own, one per request;
 *  - `coalesced`: the service's RequestLimiter (src/rate-limit/limiter.ts), which sends a
 *    key's concurrent requests as one increment;
 *  - `redis-library`, `redis-coalesced`: the same two over Redis (`BENCH_REDIS_URL`), when one answers.
 * Per request (medians over rounds): this process's CPU, the embedded PostgreSQL's CPU (a
 * fresh database as the bench's, on `BENCH_PG_PORT`) and store calls. Each arm also proves
 * itself exact first: of 5,000 requests of a fresh key with an allowance of 2,000, exactly
 * 2,000 pass (with the defaults).
 */
import Redis from 'ioredis';
import { Pool } from 'pg';
import { RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RequestLimiter } from '../src/rate-limit/limiter';
import { openBenchDatabase } from './db';
import { runMain } from './proc';

const CONCURRENCY = Number(process.env.LIMITER_CONCURRENCY || 64);
const REQUESTS = Number(process.env.LIMITER_REQUESTS || 20_000);
const ROUNDS = Number(process.env.LIMITER_ROUNDS || 3);
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const HOUR = 3600;

type Consume = (key: string, points: number) => Promise<boolean>;

const OWN_UPSERT = `insert into rate_limits as r (key, points, expire) values ($1, $2, $3)
  on conflict (key) do update set
    points = case when r.expire <= $4 then $2 else r.points + $2 end,
    expire = case when r.expire <= $4 then $3 else r.expire end
  returning points, expire`;

const WRAPPED = Symbol('counted');

/** Counts calls of `client[method]` (a spy: the call goes through). Again after a library redefines it. */
function counted(client: object, method: string, calls: { n: number }): void {
  const c = client as Record<string, ((...args: unknown[]) => unknown) & { [WRAPPED]?: true }>;
  const original = c[method];
  if (!original || original[WRAPPED]) return;
  const wrapper = Object.assign(function (this: unknown, ...args: unknown[]) {
    calls.n++;
    return original.apply(this, args);
  }, { [WRAPPED]: true as const });
  c[method] = wrapper;
}

async function run(consume: Consume, key: string, points: number, total: number): Promise<number> {
  let next = 0;
  let allowed = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next++;
        if (await consume(key, points)) allowed++;
      }
    }),
  );
  return allowed;
}

async function main() {
  const db = await openBenchDatabase();
  const pool = new Pool({ connectionString: db.url, max: 5 }); // the gate's pool size
  const pgCalls = { n: 0 };
  counted(pool, 'query', pgCalls);
  let redis: Redis | undefined = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
  } catch {
    console.log(`no Redis at ${REDIS_URL}: Redis arms skipped`);
    redis.disconnect();
    redis = undefined;
  }
  const redisCalls = { n: 0 };
  const prefix = `rl-bench-${process.pid}`;
  const library = new Map<number, RateLimiterPostgres>();
  const libraryRedis = new Map<number, RateLimiterRedis>();
  const coalesced = new RequestLimiter({ pg: pool }, `${prefix}-c`);
  const coalescedRedis = redis && new RequestLimiter({ pg: pool, redis }, `${prefix}-cr`);
  const arms: [string, Consume, { n: number }][] = [
    [
      'library',
      async (key, points) => {
        let l = library.get(points);
        if (!l) library.set(points, (l = new RateLimiterPostgres({ points, duration: HOUR, keyPrefix: `${prefix}-l`, storeClient: pool, storeType: 'pool', tableName: 'rate_limits', tableCreated: true, clearExpiredByTimeout: false })));
        return consumeOne(l, key);
      },
      pgCalls,
    ],
    [
      'own',
      async (key, points) => {
        const now = Date.now();
        const { rows } = await pool.query({ name: 'rl-own', text: OWN_UPSERT, values: [`${prefix}-o:${key}`, 1, now + HOUR * 1000, now] });
        return rows[0].points <= points;
      },
      pgCalls,
    ],
    ['coalesced', async (key, points) => (await coalesced.consume(key, points)).allowed, pgCalls],
  ];
  if (redis && coalescedRedis) {
    arms.push(
      [
        'redis-library',
        async (key, points) => {
          let l = libraryRedis.get(points);
          if (!l) libraryRedis.set(points, (l = new RateLimiterRedis({ points, duration: HOUR, keyPrefix: `${prefix}-rl`, storeClient: redis, rejectIfRedisNotReady: true })));
          return consumeOne(l, key);
        },
        redisCalls,
      ],
      ['redis-coalesced', async (key, points) => (await coalescedRedis.consume(key, points)).allowed, redisCalls],
    );
  }
  const totals = new Map<string, { cpu: number[]; pg: number[]; calls: number[] }>(arms.map(([name]) => [name, { cpu: [], pg: [], calls: [] }]));
  console.log(`${CONCURRENCY} concurrent callers, ${REQUESTS} requests of one key per arm and round, ${ROUNDS} rounds (arm order rotated)`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = arms.map((_, i) => arms[(i + round) % arms.length]);
    for (const [name, consume, calls] of order) {
      // Exactness: a fresh key with an allowance of a tenth of the requests.
      const points = Math.floor(REQUESTS / 10);
      const allowed = await run(consume, `exact-${round}`, points, REQUESTS / 4);
      if (allowed !== points) throw new Error(`${name}: ${allowed} of ${REQUESTS / 4} passed, not ${points}`);
      const key = `load-${round}`;
      await run(consume, key, 1e9, 1000); // warm: the key's row exists, the statements are prepared
      if (redis) counted(redis, 'rlflxIncr', redisCalls); // defined on the client by the first RateLimiterRedis
      calls.n = 0;
      const pgBefore = db.cpuMs?.() ?? 0;
      const before = process.cpuUsage();
      await run(consume, key, 1e9, REQUESTS);
      const used = process.cpuUsage(before);
      const t = totals.get(name)!;
      t.cpu.push((used.user + used.system) / 1000 / REQUESTS);
      t.pg.push(((db.cpuMs?.() ?? 0) - pgBefore) / REQUESTS);
      t.calls.push(calls.n / REQUESTS);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log('\n| Arm | CPU ms/req (this process) | PG CPU ms/req | store calls/req |\n|---|---|---|---|');
  for (const [name, t] of totals) {
    console.log(`| ${name} | ${median(t.cpu).toFixed(4)} | ${median(t.pg).toFixed(4)} | ${median(t.calls).toFixed(3)} |`);
  }
  await pool.end();
  redis?.disconnect();
  await db.close();
}

/** rate-limiter-flexible's own consume of one point: true when allowed. */
async function consumeOne(limiter: RateLimiterAbstract, key: string): Promise<boolean> {
  try {
    await limiter.consume(key, 1);
    return true;
  } catch (err) {
    if (err instanceof RateLimiterRes) return false;
    throw err;
  }
}

runMain(main);
