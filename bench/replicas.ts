import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { RequestLimiter } from '../src/rate-limit/limiter';
import { openOrm } from '../src/db/orm';
import { ReadRouter } from '../src/db/replicas';
import { createLogger } from '../src/logger';
import { startReplicated } from '../test/helpers/standby';
import { treeCpuMs } from './db';
import { median, shoot, timeOnce, type Shot } from './load';
import { startServer, type Server } from './proc';
import { ADMIN_TOKEN } from './sql';

/**
 * Reads on a replica (docs/scaling.md): the groups page (GET /api/v1/groups?limit=20) at
 * saturation from a service on the primary alone and from a service with one streaming
 * replica, both over the same primary, in alternating rounds of the same run: throughput and
 * the primary's CPU per read (and the replica's). Then the cost of the read-your-writes check
 * per read, timed in process (timeCheck), against the median of the same read
 * one at a time.
 */
export interface ReplicaBench {
  rounds: number;
  seconds: number;
  connections: number;
  primaryOnly: Shot[];
  withReplica: Shot[];
  /** Replica CPU per read in the with-replica rounds (ms). */
  replicaCpuMs: number[];
  /** The same with REDIS_URL too (rate limits and write positions in Redis), when Redis answers. */
  withReplicaRedis?: Shot[];
  replicaRedisCpuMs?: number[];
  /** Median of the read one at a time, with the replica (ms). */
  readMs: number;
  /** Median time of the read-your-writes check per read, µs, by store. */
  checkUs: { postgresql: number; redis?: number };
}

export async function timeReplicas(
  opts: { rounds: number; seconds: number; connections: number; args: string[]; node: string; outDir: string; redisUrl?: string },
  log: (line: string) => void,
): Promise<ReplicaBench> {
  const db = await startReplicated('0');
  const servers: Server[] = [];
  try {
    log('replicas: a primary and a streaming standby (embedded PostgreSQL), two services');
    const pidOf = (which: 'primary' | 'standby') =>
      Number(fs.readFileSync(path.join(db.dataDir, which, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const env = { NODE_ENV: 'production', ADMIN_TOKEN, LOG_LEVEL: 'warn', DATABASE_URL: db.primaryUrl, SECRET_ENCRYPTION_KEYS: randomBytes(32).toString('base64') };
    const alone = await startServer('replicas-primary-only', opts.args, env, path.join(opts.outDir, 'replicas-primary-only.log'), opts.node);
    servers.push(alone);
    const withReplica = await startServer('replicas-with-replica', opts.args, { ...env, DATABASE_REPLICA_URLS: db.standbyUrl }, path.join(opts.outDir, 'replicas-with-replica.log'), opts.node);
    servers.push(withReplica);
    const withRedis = opts.redisUrl
      ? await startServer('replicas-with-redis', opts.args, { ...env, DATABASE_REPLICA_URLS: db.standbyUrl, REDIS_URL: opts.redisUrl }, path.join(opts.outDir, 'replicas-with-redis.log'), opts.node)
      : undefined;
    if (withRedis) servers.push(withRedis);

    // One community with 1,000 groups; a key that writes nothing (its reads may all go to the replica).
    const gql = async <T>(query: string, variables: object): Promise<T> => {
      const res = await fetch(`${alone.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data: T; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const { createCommunity } = await gql<{ createCommunity: { id: string } }>('mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', { i: { name: 'Replicas' } });
    const { createApiKey } = await gql<{ createApiKey: { key: string } }>('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', {
      i: { communityId: createCommunity.id, rateLimitPerHour: 1_000_000_000 },
    });
    const c = new Client({ connectionString: db.primaryUrl });
    await c.connect();
    await c.query(
      `insert into groups (id, community_id, name, created_at, modified_at)
       select gen_random_uuid(), $1, 'Group ' || i, now() - make_interval(secs => i), now() from generate_series(1, 1000) i`,
      [createCommunity.id],
    );
    await c.query('analyze');
    await c.end();
    await new Promise((r) => setTimeout(r, 1000)); // the replica has replayed the seed
    const req = { method: 'GET', path: '/api/v1/groups?limit=20', headers: { 'x-api-key': createApiKey.key } };
    for (const s of servers) await shoot(s, req, { connections: opts.connections, seconds: 1 }); // warm

    const primaryOnly: Shot[] = [];
    const replicated: Shot[] = [];
    const replicaCpuMs: number[] = [];
    const redisShots: Shot[] = [];
    const redisCpuMs: number[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      primaryOnly.push(await shoot(alone, req, { connections: opts.connections, seconds: opts.seconds, dbCpu: () => treeCpuMs(pidOf('primary')) }));
      const standbyBefore = treeCpuMs(pidOf('standby'));
      const shot = await shoot(withReplica, req, { connections: opts.connections, seconds: opts.seconds, dbCpu: () => treeCpuMs(pidOf('primary')) });
      replicated.push(shot);
      replicaCpuMs.push(shot.ok ? (treeCpuMs(pidOf('standby')) - standbyBefore) / shot.ok : NaN);
      if (withRedis) {
        const before = treeCpuMs(pidOf('standby'));
        const r = await shoot(withRedis, req, { connections: opts.connections, seconds: opts.seconds, dbCpu: () => treeCpuMs(pidOf('primary')) });
        redisShots.push(r);
        redisCpuMs.push(r.ok ? (treeCpuMs(pidOf('standby')) - before) / r.ok : NaN);
        log(`replicas round ${round + 1}: with replica and Redis ${r.rps.toFixed(0)} req/s (primary ${r.dbCpuMs.toFixed(3)}, replica ${redisCpuMs[round].toFixed(3)} ms/read)`);
      }
      log(
        `replicas round ${round + 1}: primary alone ${primaryOnly[round].rps.toFixed(0)} req/s (primary CPU ${primaryOnly[round].dbCpuMs.toFixed(3)} ms/read); ` +
          `with replica ${shot.rps.toFixed(0)} req/s (primary ${shot.dbCpuMs.toFixed(3)}, replica ${replicaCpuMs[round].toFixed(3)} ms/read)`,
      );
    }

    const single: number[] = [];
    for (let i = 0; i < 300; i++) single.push((await timeOnce(withReplica.url, req)).ms);
    const readMs = median(single);

    // The check alone, in process, with each store: what `pick` adds to every read of a key.
    const checkUs: ReplicaBench['checkUs'] = { postgresql: await timeCheck(db.primaryUrl, db.standbyUrl) };
    if (opts.redisUrl) {
      const { default: Redis } = await import('ioredis');
      const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      try {
        checkUs.redis = await timeCheck(db.primaryUrl, db.standbyUrl, redis);
      } finally {
        redis.disconnect();
      }
    }
    log(`replicas: read ${readMs.toFixed(2)} ms one at a time; the read-your-writes check ${checkUs.postgresql.toFixed(0)} us (PostgreSQL store)${checkUs.redis !== undefined ? `, ${checkUs.redis.toFixed(0)} us (Redis)` : ''}`);
    return {
      rounds: opts.rounds,
      seconds: opts.seconds,
      connections: opts.connections,
      primaryOnly,
      withReplica: replicated,
      replicaCpuMs,
      ...(withRedis ? { withReplicaRedis: redisShots, replicaRedisCpuMs: redisCpuMs } : {}),
      readMs,
      checkUs,
    };
  } finally {
    for (const s of servers) await s.stop().catch(() => undefined);
    await db.close();
  }
}

/**
 * The check per read: the caller's position comes with the count of the request
 * (src/rate-limit/limiter.ts: read by the counting statement itself with PostgreSQL, by a GET
 * sent alongside the count with Redis), and `pick` compares it in memory. Its cost is that
 * count with the position minus the same count without it, plus the pick: the median of 1,800
 * such pairs, run alternately in process.
 */
async function timeCheck(primaryUrl: string, standbyUrl: string, redis?: import('ioredis').default): Promise<number> {
  const orm = await openOrm(primaryUrl, 2, false, undefined, [standbyUrl]);
  const router = new ReadRouter(orm, primaryUrl, [standbyUrl], { maxLagMs: 5000, logger: createLogger('silent'), redis });
  const pool = new Pool({ connectionString: primaryUrl, max: 1 });
  try {
    await router.start();
    await router.recordWrite('key:bench');
    const plain = new RequestLimiter({ pg: pool, redis }, 'bench-plain');
    const positioned = new RequestLimiter({ pg: pool, redis }, 'bench-positioned', undefined, true);
    const added: number[] = [];
    for (let i = 0; i < 2000; i++) {
      let t = performance.now();
      await plain.consume('bench', 1e9);
      const without = performance.now() - t;
      t = performance.now();
      const verdict = await positioned.consume('bench', 1e9, 'key:bench');
      await router.pick('key:bench', undefined, verdict.position);
      added.push((performance.now() - t - without) * 1000);
    }
    return Math.max(0, median(added.slice(200)));
  } finally {
    await pool.end();
    await router.close();
    await orm.close(true);
  }
}
