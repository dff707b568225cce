import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app';
import { serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

/**
 * Safe retries and conditional requests against real service processes: two instances on one
 * database, concurrent requests, and kill -9 in the middle of an idempotent bulk write.
 */
const env = () => ({ DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN });
let a: ServiceProcess;
let b: ServiceProcess;
let db: Client;
let key: string;
let keyId: string;
let communityId: string;

type Reply = { status: number; text: string; headers: Headers };

async function call(service: ServiceProcess, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const res = await fetch(`${service.url}${path}`, {
    method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
    headers: { 'x-api-key': key, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}


const count = async (lastName: string) =>
  (await db.query('select count(*)::int as n from members where community_id = $1 and last_name = $2', [communityId, lastName])).rows[0].n as number;

const bulk = (lastName: string, n: number) => ({ members: Array.from({ length: n }, (_, i) => ({ firstName: `M${i}`, lastName })) });

beforeAll(async () => {
  db = new Client({ connectionString: testDatabaseUrl() });
  await db.connect();
  [a, b] = await Promise.all([startService(env()), startService(env())]);
  ({ communityId, key, keyId } = await serviceTenant(a.url, ADMIN_TOKEN, 'idem', 1_000_000));
}, 90_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.end();
});

describe('Idempotency-Key across requests, instances and crashes', () => {
  it('the same bulk POST sent 5 times at once (over two instances) creates once; the answers are one original and 409s or identical replays', async () => {
    const body = bulk('five', 500);
    const headers = { 'idempotency-key': 'five-at-once' };
    const replies = await Promise.all([a, b, a, b, a].map((s) => call(s, '/api/v1/members/_bulk', { body, headers })));
    const created = replies.filter((r) => r.status === 201);
    expect(replies.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(created.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    for (const r of replies.filter((x) => x.status === 409)) expect(JSON.parse(r.text).status).toBe(409);
    expect(await count('five')).toBe(500);
    // Once the first has finished, every repeat on either instance is the same replay.
    const original = created.find((r) => r.headers.get('idempotent-replayed') === null)!;
    for (const s of [a, b]) {
      const again = await call(s, '/api/v1/members/_bulk', { body, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(original.text);
    }
    expect(await count('five')).toBe(500);
  });

  it('a key used on instance A replays on instance B', async () => {
    const headers = { 'idempotency-key': 'a-then-b' };
    const onA = await call(a, '/api/v1/groups', { body: { name: 'A then B' }, headers });
    expect(onA.status).toBe(201);
    const onB = await call(b, '/api/v1/groups', { body: { name: 'A then B' }, headers });
    expect(onB.status).toBe(201);
    expect(onB.headers.get('idempotent-replayed')).toBe('true');
    expect(onB.text).toBe(onA.text);
    const rows = await db.query('select count(*)::int as n from groups where community_id = $1 and name = $2', [communityId, 'A then B']);
    expect(rows.rows[0].n).toBe(1);
  });

  it('kill -9 during an idempotent bulk, then the retry on the other instance: the records exist exactly once', async () => {
    let killedMidFlight = 0;
    for (let round = 0; round < 4; round++) {
      const lastName = `crash-${round}`;
      const body = bulk(lastName, 1000);
      const headers = { 'idempotency-key': `crash-${round}` };
      const inFlight = call(a, '/api/v1/members/_bulk', { body, headers }).catch(() => undefined);
      // Kill while the request's transaction is open: it holds the key's advisory lock then.
      for (const until = Date.now() + 10_000; Date.now() < until; ) {
        const held = await db.query(
          `select 1 from pg_locks l where l.locktype = 'advisory' and l.granted
             and ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
          [`idempotency:key:${keyId}:crash-${round}`],
        );
        if (held.rowCount) break;
      }
      await a.kill();
      if ((await inFlight) === undefined) killedMidFlight++;
      // The client retries; while PostgreSQL has not yet noticed the dead connection, the key is still "running" (409).
      let retry: Reply | undefined;
      for (const until = Date.now() + 60_000; Date.now() < until; ) {
        retry = await call(b, '/api/v1/members/_bulk', { body, headers });
        if (retry.status !== 409) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(retry!.status).toBe(201);
      expect(JSON.parse(retry!.text)).toHaveLength(1000);
      expect(await count(lastName)).toBe(1000);
      const again = await call(b, '/api/v1/members/_bulk', { body, headers });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(retry!.text);
      expect(await count(lastName)).toBe(1000);
      a = await startService(env());
    }
    expect(killedMidFlight).toBeGreaterThan(0);
  }, 240_000);
});

describe('If-Match and modifiedSince against the running service', () => {
  it('20 concurrent PATCHes with the same If-Match: exactly one 204, the rest 412', async () => {
    const group = JSON.parse((await call(a, '/api/v1/groups', { body: { name: 'contended' } })).text);
    const etag = (await call(a, `/api/v1/groups/${group.id}`)).headers.get('etag')!;
    expect(etag).toBeTruthy();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i % 2 ? a : b, `/api/v1/groups/${group.id}`, { method: 'PATCH', body: { name: `writer ${i}` }, headers: { 'if-match': etag } }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([204, ...Array(19).fill(412)]);
    const winner = replies.findIndex((r) => r.status === 204);
    expect(JSON.parse((await call(b, `/api/v1/groups/${group.id}`)).text).name).toBe(`writer ${winner}`);
  });

  it('modifiedSince returns exactly the records changed since, across pages', async () => {
    const created = JSON.parse((await call(a, '/api/v1/members/_bulk', { body: bulk('sync', 30) })).text) as { id: string }[];
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const changed = created.filter((_, i) => i % 4 === 0).map((m) => m.id);
    for (const id of changed) expect((await call(b, `/api/v1/members/${id}`, { method: 'PATCH', body: { firstName: 'changed' } })).status).toBe(204);
    const added = JSON.parse((await call(b, '/api/v1/members/_bulk', { body: bulk('sync', 3) })).text) as { id: string }[];
    const seen: string[] = [];
    let next: string | undefined = `/api/v1/members?modifiedSince=${encodeURIComponent(since)}&limit=4&sort=modifiedAt`;
    let pages = 0;
    while (next) {
      const page = JSON.parse((await call(pages % 2 ? a : b, next)).text);
      seen.push(...page.results.map((m: { id: string }) => m.id));
      next = page._links.next ? `/api/v1${page._links.next.replace(/^.*\/api\/v1/, '')}` : undefined;
      pages++;
    }
    expect(pages).toBeGreaterThan(2);
    expect(seen.sort()).toEqual([...changed, ...added.map((m) => m.id)].sort());
  });
});
