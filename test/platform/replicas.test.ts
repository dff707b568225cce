import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { register } from 'prom-client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { loadConfig } from '../../src/config';
import { startRuntime } from '../../src/runtime';
import { readTransaction } from '../../src/db/transaction';
import { READ_ROUTER } from '../../src/db/replicas';
import { redisAvailable } from '../helpers/redis';
import { startService, type ServiceProcess } from '../helpers/process';
import { startReplicated, type Replicated } from '../helpers/standby';
import { sleep } from '../helpers/jobs';

/**
 * Reads on a real streaming standby that lags two seconds (recovery_min_apply_delay), behind
 * two service processes on the same primary: read-your-writes across instances, reads of
 * callers without writes on the replica, the replica stopped and restarted mid-run, and the
 * events feed paged on the lagging replica.
 */
const ADMIN = 'replica-test-operator-token-0123';

/** True once `what` holds, checked every 20 ms; false after `ms`. */
async function until(what: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return true;
    await sleep(20);
  }
  return false;
}
let db: Replicated;
let services: ServiceProcess[] = [];
let s1: string;
let s2: string;

beforeAll(async () => {
  db = await startReplicated('2s');
  const env = { DATABASE_URL: db.primaryUrl, DATABASE_REPLICA_URLS: db.standbyUrl, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' };
  services = await Promise.all([startService(env), startService(env)]);
  [s1, s2] = services.map((s) => s.url);
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await db?.close();
});

async function operator<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${s1}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function community(): Promise<{ writer: string; reader: string }> {
  const { createCommunity } = await operator<{ createCommunity: { id: string } }>('mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', { i: { name: 'Replicated' } });
  const key = async () =>
    (
      await operator<{ createApiKey: { key: string } }>('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', {
        i: { communityId: createCommunity.id, rateLimitPerHour: 1_000_000 },
      })
    ).createApiKey.key;
  return { writer: await key(), reader: await key() };
}

interface Answer {
  status: number;
  body: any;
  token: string | null;
}

async function call(base: string, key: string, method: string, path: string, body?: object, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, token: res.headers.get('consistency-token') };
}

describe('reads on a lagging replica', () => {
  it('1,000 write-then-read sequences over two instances: no stale read', async () => {
    const { writer } = await community();
    let stale = 0;
    let tokens = 0;
    // 4 sequences at a time, one key, each on its own groups (so a read must show exactly its
    // write): create-then-read and patch-then-read, the write and the read on different instances.
    let n = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const groups: string[] = [];
        for (let i = n++; i < 1000; i = n++) {
          const [write, read] = i % 2 ? [s1, s2] : [s2, s1];
          if (!groups.length || (i % 4 < 2 && groups.length < 20)) {
            const created = await call(write, writer, 'POST', '/groups', { name: `G${i}` });
            expect(created.status).toBe(201);
            if (created.token) tokens++;
            groups.push(created.body.id);
            const got = await call(read, writer, 'GET', `/groups/${created.body.id}`);
            if (got.status !== 200 || got.body.name !== `G${i}`) stale++;
          } else {
            const id = groups[i % groups.length];
            const patched = await call(write, writer, 'PATCH', `/groups/${id}`, { about: `v${i}` });
            expect(patched.status).toBe(204);
            if (patched.token) tokens++;
            const got = await call(read, writer, 'GET', `/groups/${id}`);
            if (got.status !== 200 || got.body.about !== `v${i}`) stale++;
          }
        }
      }),
    );
    expect(stale).toBe(0);
    expect(tokens).toBe(1000); // every write answered a Consistency-Token
  }, 180_000);

  it('a caller without writes reads from the replica; a Consistency-Token makes its read fresh', async () => {
    const { writer, reader } = await community();
    const g = await call(s1, writer, 'POST', '/groups', { name: 'Watched', about: 'v0' });
    await sleep(3000); // the replica has the group
    let fromReplica = 0;
    const reads = 50;
    for (let i = 1; i <= reads; i++) {
      const w = await call(i % 2 ? s1 : s2, writer, 'PATCH', `/groups/${g.body.id}`, { about: `v${i}` });
      expect(w.status).toBe(204);
      // The reader has written nothing: the lagging replica serves it, 2 s behind the writer.
      const r = await call(i % 2 ? s2 : s1, reader, 'GET', `/groups/${g.body.id}`);
      expect(r.status).toBe(200);
      if (r.body.about !== `v${i}`) fromReplica++;
      // With the writer's token, the same reader sees the write.
      const fresh = await call(i % 2 ? s2 : s1, reader, 'GET', `/groups/${g.body.id}`, undefined, { 'consistency-token': w.token! });
      expect(fresh.body.about).toBe(`v${i}`);
    }
    expect(fromReplica / reads).toBeGreaterThanOrEqual(0.8);

    const bad = await call(s1, reader, 'GET', `/groups/${g.body.id}`, undefined, { 'consistency-token': 'not-a-token' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].pointer).toBe('#/header/Consistency-Token');
  }, 60_000);

  it('the replica stopped mid-run: no request fails, reads move to the primary and back after a restart', async () => {
    const { writer, reader } = await community();
    const g = await call(s1, writer, 'POST', '/groups', { name: 'Failover', about: 'v0' });
    await sleep(2500);
    let i = 0;
    /** One write and one read by a caller without writes: true when the read was the replica's (stale). */
    const step = async () => {
      i++;
      const w = await call(s1, writer, 'PATCH', `/groups/${g.body.id}`, { about: `v${i}` });
      expect(w.status).toBe(204);
      const mine = await call(s2, writer, 'GET', `/groups/${g.body.id}`);
      expect(mine.status).toBe(200);
      expect(mine.body.about).toBe(`v${i}`); // read-your-writes throughout
      const r = await call(s2, reader, 'GET', `/groups/${g.body.id}`);
      expect(r.status).toBe(200);
      // GraphQL queries read from the replica too: never an error because of it.
      const q = await fetch(`${s1}/graphql`, {
        method: 'POST',
        headers: { 'x-api-key': reader, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ group(ref: { id: "${g.body.id}" }) { name about } groups(limit: 5) { size } }` }),
      });
      const qb = (await q.json()) as { errors?: unknown[] };
      expect(q.status, JSON.stringify(qb)).toBe(200);
      expect(qb.errors).toBeUndefined();
      return r.body.about !== `v${i}`;
    };
    expect(await step()).toBe(true);

    const stopping = db.stopStandby();
    for (let k = 0; k < 20; k++) await step(); // during and right after the stop: every request answered
    await stopping;
    await sleep(1000); // within a second, no reads go to the stopped replica
    for (let k = 0; k < 10; k++) expect(await step()).toBe(false);

    await db.startStandby();
    let back = false;
    for (let t = Date.now(); Date.now() - t < 20_000 && !back; ) back = await step();
    expect(back).toBe(true);
  }, 60_000);

  it('the events feed paged on the lagging replica never skips an event', async () => {
    const { writer, reader } = await community();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call(s1, writer, 'POST', '/groups', { name: `E${i}` })).body.id);
    let writing = true;
    const seen: string[] = [];
    const pager = (async () => {
      let after = '';
      for (let page = 0; ; page++) {
        const stillWriting = writing;
        // Every third page with the writer's key: it reads from the primary, ahead of the
        // replica, and the next page's cursor (read by the reader, on the replica) is not there yet.
        const key = page % 3 === 2 ? writer : reader;
        const res = await call(page % 2 ? s1 : s2, key, 'GET', `/events?limit=5${after ? `&after=${after}` : ''}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        seen.push(...res.body.results.map((e: { id: string }) => e.id));
        if (res.body.results.length) after = res.body.results.at(-1).id;
        if (!res.body.results.length && !stillWriting) {
          // caught up on whatever node served it; the replica may still be behind: wait it out once
          await sleep(2500);
          const last = await call(s2, reader, 'GET', `/events?limit=100${after ? `&after=${after}` : ''}`);
          seen.push(...last.body.results.map((e: { id: string }) => e.id));
          return;
        }
        await sleep(20);
      }
    })();
    for (let i = 0; i < 60; i++) {
      const res = await call(i % 2 ? s1 : s2, writer, 'PATCH', `/groups/${ids[i % ids.length]}`, { about: `w${i}` });
      expect(res.status).toBe(204);
    }
    writing = false;
    await pager;
    const all: string[] = [];
    for (let after = ''; ; ) {
      const page = await call(s1, writer, 'GET', `/events?limit=100${after ? `&after=${after}` : ''}`);
      all.push(...page.body.results.map((e: { id: string }) => e.id));
      if (!page.body._links.next) break;
      after = page.body.results.at(-1).id;
    }
    // The two keys' api_key.created, 5 groups created, 60 updates.
    expect(all.length).toBe(67);
    expect(seen).toEqual(all);
  }, 60_000);
});

describe('in process: the transaction layer and the Redis position store', () => {
  const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

  it('readTransaction opens on the replica inside a read scope and on the primary outside it; positions in Redis', async (ctx) => {
    if (!(await redisAvailable(REDIS))) return ctx.skip();
    const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: ADMIN, REDIS_URL: REDIS, DATABASE_REPLICA_URLS: db.standbyUrl });
    const runtime = await startRuntime(config, db.primaryUrl, { migrate: false });
    try {
      const reads = runtime.state.get(READ_ROUTER);
      const em = runtime.orm.em.fork() as unknown as EntityManager;
      const recovery = (tem: EntityManager) => tem.execute<{ r: boolean }[]>('select pg_is_in_recovery() as r').then((rows) => rows[0].r);
      expect(await readTransaction(em, recovery)).toBe(false);
      // The replica gets reads once a poll finds it well: the first poll, made at start on a
      // loaded machine, may time out (500 ms), and the read would then rightly go to the primary.
      expect(await until(() => reads.replicas[0].up, 5000)).toBe(true);
      expect(await reads.read(undefined, undefined, () => readTransaction(em, recovery))).toBe(true);
      // A write's position, in Redis: the same caller's next read waits for it. The standby's
      // replay is paused meanwhile, so it cannot have the write yet (the primary answers);
      // callers unique to this run, as Redis is shared with every other run on the machine.
      const caller = `key:in-process-${randomUUID()}`;
      const standby = new Client({ connectionString: db.standbyUrl });
      await standby.connect();
      try {
        await standby.query('select pg_wal_replay_pause()');
        await runtime.pool.query('select txid_current()'); // a commit: the primary's position moves past the standby's
        const token = await reads.recordWrite(caller);
        expect(token).toMatch(/^[0-9A-F]{16}$/);
        expect(await reads.read(caller, undefined, () => readTransaction(em, recovery))).toBe(false);
        expect(await reads.read(`key:someone-else-${randomUUID()}`, undefined, () => readTransaction(em, recovery))).toBe(true);
      } finally {
        await standby.query('select pg_wal_replay_resume()');
        await standby.end();
      }

      // The same through HTTP, with the metrics the process registers.
      const before = (await register.getSingleMetric('db_reads_total')!.get()).values.find((v) => v.labels.node === 'replica0')?.value ?? 0;
      const http = request(runtime.app);
      const { body } = await http.post('/graphql').set('authorization', `Bearer ${ADMIN}`).send({ query: 'mutation { createCommunity(input: { name: "P" }) { id } }' });
      const key = (
        await http
          .post('/graphql')
          .set('authorization', `Bearer ${ADMIN}`)
          .send({ query: 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', variables: { i: { communityId: body.data.createCommunity.id } } })
      ).body.data.createApiKey.key;
      // The position of a key's read comes with its count (a GET sent alongside it), not from a lookup of its own.
      const positions = reads.positions as { get: (caller: string) => Promise<bigint> };
      const get = positions.get;
      let lookups = 0;
      positions.get = (caller) => (lookups++, get.call(positions, caller));
      const created = await http.post('/graphql').set('x-api-key', key).send({ query: 'mutation { createGroup(input: { name: "Q" }) { id } }' });
      expect(created.headers['consistency-token']).toMatch(/^[0-9A-F]{16}$/);
      const q = await http.post('/graphql').set('x-api-key', key).send({ query: `{ group(ref: { id: "${created.body.data.createGroup.id}" }) { name } }` });
      expect(q.body.data.group.name).toBe('Q'); // its own write, through GraphQL too
      expect((await http.get(`/api/v1/groups/${created.body.data.createGroup.id}`).set('x-api-key', key)).status).toBe(200);
      positions.get = get;
      expect(lookups).toBe(0);
      const bad = await http.post('/graphql').set('x-api-key', key).set('consistency-token', 'zz').send({ query: '{ groups { size } }' });
      expect(bad.status).toBe(400);
      // A key that has written nothing: its reads are the replica's, each counted once.
      const reader = (
        await http
          .post('/graphql')
          .set('authorization', `Bearer ${ADMIN}`)
          .send({ query: 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', variables: { i: { communityId: body.data.createCommunity.id } } })
      ).body.data.createApiKey.key;
      for (let i = 0; i < 20; i++) expect((await http.get('/api/v1/groups').set('x-api-key', reader).set('consistency-token', '0000000000000000')).status).toBe(200);
      const after = (await register.getSingleMetric('db_reads_total')!.get()).values.find((v) => v.labels.node === 'replica0')?.value ?? 0;
      expect(after - before).toBeGreaterThanOrEqual(20);
      const lag = (await register.getSingleMetric('db_replica_lag_seconds')!.get()).values.find((v) => v.labels.replica === 'replica0');
      expect(lag).toBeDefined();
    } finally {
      await runtime.close();
    }
  }, 60_000);
});

describe('in process: the PostgreSQL position store', () => {
  it("a key's read learns its last write position from the statement that counted it: no lookup of its own, and still fresh", async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: ADMIN, DATABASE_REPLICA_URLS: db.standbyUrl });
    const runtime = await startRuntime(config, db.primaryUrl, { migrate: false });
    const standby = new Client({ connectionString: db.standbyUrl });
    await standby.connect();
    try {
      const reads = runtime.state.get(READ_ROUTER);
      // What the router's own connection to the primary runs (position lookups and records).
      const routerPool = (reads as unknown as { primary: { query: (...a: unknown[]) => unknown } }).primary;
      const lookups: string[] = [];
      const original = routerPool.query;
      routerPool.query = function (this: unknown, ...args: unknown[]) {
        const q = args[0] as { name?: string } | string;
        if (typeof q === 'object' && q.name === 'rp_get') lookups.push(q.name);
        return original.apply(this, args);
      };
      const http = request(runtime.app);
      const admin = (query: string, variables?: object) => http.post('/graphql').set('authorization', `Bearer ${ADMIN}`).send({ query, variables });
      const cid = (await admin('mutation { createCommunity(input: { name: "PG positions" }) { id } }')).body.data.createCommunity.id;
      const newKey = async () =>
        (await admin('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', { i: { communityId: cid } })).body.data.createApiKey.key as string;
      const [writer, reader] = [await newKey(), await newKey()];
      const shown = await http.post('/api/v1/groups').set('x-api-key', writer).send({ name: 'Before' });
      expect(shown.status).toBe(201);
      await sleep(3000); // the lagging replica has it
      await standby.query('select pg_wal_replay_pause()');
      const created = await http.post('/api/v1/groups').set('x-api-key', writer).send({ name: 'Fresh' });
      expect(created.status).toBe(201);
      // The writer's reads see its write (the primary answers: the replica's replay is paused), over REST and GraphQL.
      expect((await http.get(`/api/v1/groups/${created.body.id}`).set('x-api-key', writer)).status).toBe(200);
      const q = await http.post('/graphql').set('x-api-key', writer).send({ query: `{ group(ref: { id: "${created.body.id}" }) { name } }` });
      expect(q.body.data.group.name).toBe('Fresh');
      // A key that wrote nothing reads from the replica, which has not replayed the group yet.
      expect((await http.get(`/api/v1/groups/${created.body.id}`).set('x-api-key', reader)).status).toBe(404);
      expect((await http.get(`/api/v1/groups/${shown.body.id}`).set('x-api-key', reader)).status).toBe(200);
      expect(lookups).toEqual([]);
      routerPool.query = original;
    } finally {
      await standby.query('select pg_wal_replay_resume()');
      await standby.end();
      await runtime.close();
    }
  }, 60_000);
});

describe('in process: lag', () => {
  it('a replica further behind than REPLICA_MAX_LAG_MS stops receiving reads within a second, and gets them back once it catches up', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: ADMIN, DATABASE_REPLICA_URLS: db.standbyUrl, REPLICA_MAX_LAG_MS: '1000' });
    const runtime = await startRuntime(config, db.primaryUrl, { migrate: false });
    const writer = new (await import('pg')).Client({ connectionString: db.primaryUrl });
    await writer.connect();
    try {
      const reads = runtime.state.get(READ_ROUTER);
      const replica = reads.replicas[0];
      // Idle primary: the 2 s apply delay is caught up, the replica serves reads.
      expect(await until(() => replica.up, 5000)).toBe(true);
      expect(await reads.pick('key:lag-reader', undefined)).toBe(replica);
      // Writes every 50 ms: the replica stays 2 s behind, over the 1 s limit.
      await writer.query('create table if not exists lag_probe (at timestamptz)');
      let writing = true;
      const load = (async () => {
        while (writing) {
          await writer.query('insert into lag_probe values (now())'); // a commit: what the apply delay holds back
          await sleep(50);
        }
      })();
      const started = Date.now();
      // The lag passes 1 s about 1 s after the writes start; the next poll takes the replica out.
      expect(await until(async () => (await reads.pick('key:lag-reader', undefined)) === null, 4000)).toBe(true);
      expect(Date.now() - started).toBeLessThan(1000 + 1000 + 500);
      expect(replica.lagMs).toBeGreaterThan(1000);
      writing = false;
      await load;
      // Writes stop: after the 2 s delay it has replayed everything, and reads return.
      expect(await until(async () => (await reads.pick('key:lag-reader', undefined)) === replica, 6000)).toBe(true);
    } finally {
      await writer.end();
      await runtime.close();
    }
  }, 60_000);
});
