import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import request from 'supertest';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../src/runtime';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { requestArb } from '../helpers/fuzz';
import { parseMetrics, seriesCount, total } from '../helpers/prometheus';
import { testDatabaseUrl } from '../helpers/database';
import { rawHttp } from '../helpers/process';

/** Requests by exact status; the duration histogram (by status class) below. */
const H = 'http_server_requests_total';
const COUNT = 'http_server_request_duration_seconds_count';
const BUCKETS = 'http_server_request_duration_seconds_bucket';
const SUM = 'http_server_request_duration_seconds_sum';

describe('GET /metrics', () => {
  let app: TestApp;
  let t: Tenant;
  const scrape = async () => {
    const res = await request(app.runtime.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  };

  beforeAll(async () => {
    app = await startTestApp();
    t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  });
  afterAll(() => app.close());

  it('counts a scripted mix of requests exactly, by route template, status, method and API', async () => {
    const http = request(app.runtime.app);
    const before = await scrape();
    const missing = '0190f1a2-0000-7000-8000-000000000000';
    for (let i = 0; i < 3; i++) expect((await http.get('/api/v1/groups').set('X-API-Key', t.key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: `g${i}` })).status).toBe(201);
    expect((await http.post('/api/v1/groups').set('X-API-Key', t.key).send({ about: 'no name' })).status).toBe(400);
    for (let i = 0; i < 4; i++) expect((await http.get(`/api/v1/groups/${missing}`).set('X-API-Key', t.key)).status).toBe(404);
    // Refused by the gate before any route runs: still counted under the route's template.
    for (let i = 0; i < 2; i++) expect((await http.get(`/api/v1/groups/${missing}-${i}`)).status).toBe(401);
    for (const path of ['/api/v1/nothing/here', '/nothing', '/api/v1/groups/a/b/c/d']) expect((await http.get(path).set('X-API-Key', t.key)).status).toBe(404);
    expect((await http.post('/graphql').set('X-API-Key', t.key).send({ query: '{ groups { size } }' })).status).toBe(200);
    expect((await http.post('/graphql').set('X-API-Key', t.key).send({ query: 'mutation { createGroup(input: { name: "q" }) { id } }' })).status).toBe(200);
    expect((await http.get('/livez')).status).toBe(200);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => total(after, H, labels) - total(before, H, labels);

    expect(delta({ method: 'GET', route: '/api/v1/groups', status_code: '200', api: 'rest', operation_type: 'query' })).toBe(3);
    expect(delta({ method: 'POST', route: '/api/v1/groups', status_code: '201', api: 'rest', operation_type: 'mutation' })).toBe(2);
    expect(delta({ method: 'POST', route: '/api/v1/groups', status_code: '400' })).toBe(1);
    expect(delta({ method: 'GET', route: '/api/v1/groups/:identifier', status_code: '404', api: 'rest' })).toBe(4);
    expect(delta({ method: 'GET', route: '/api/v1/groups/:identifier', status_code: '401' })).toBe(2);
    expect(delta({ route: 'unmatched', status_code: '404' })).toBe(3);
    expect(delta({ route: '/graphql', status_code: '200', api: 'graphql', operation_type: 'query' })).toBe(1);
    expect(delta({ route: '/graphql', status_code: '200', api: 'graphql', operation_type: 'mutation' })).toBe(1);
    expect(delta({ route: '/livez', status_code: '200', api: 'other' })).toBe(1);
    // Never a raw path or an id in a label.
    for (const m of after.get(H)!.metrics) expect(m.labels!.route).not.toMatch(/[0-9a-f]{8}-|\/nothing/);
    // A histogram: the +Inf bucket is the count, the sum is positive.
    const labels = { route: '/api/v1/groups', method: 'GET', status_class: '2xx' };
    expect(total(after, COUNT, labels) - total(before, COUNT, labels)).toBe(3);
    expect(total(after, COUNT, { route: '/api/v1/groups/:identifier', status_class: '4xx' }) - total(before, COUNT, { route: '/api/v1/groups/:identifier', status_class: '4xx' })).toBe(6);
    expect(total(after, BUCKETS, { ...labels, le: '+Inf' })).toBe(total(after, COUNT, labels));
    expect(total(after, SUM, labels)).toBeGreaterThan(0);
    expect(total(after, 'http_server_active_requests')).toBe(1); // the scrape itself
  });

  it('counts the answers written before Express: parser errors, 431, 417 and refused WebSocket handshakes', async () => {
    const server = await listen(app.runtime.app, 0);
    app.runtime.attach(server);
    const port = (server.address() as AddressInfo).port;
    try {
      const before = await scrape();
      const sent = [
        [`GET /api/v1/groups HTTP/1.1\r\nHost: x\r\nX-Odd: a\x01b\r\n\r\n`, 400],
        ['NOT AN HTTP REQUEST\r\n\r\n', 400],
        [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431],
        ['POST /api/v1/groups HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: fancy\r\nConnection: close\r\n\r\n{}', 417],
        ['GET /graphql HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 12\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n', 400],
      ] as const;
      for (const [data, status] of sent) expect((await rawHttp(port, data)).status, data.slice(0, 30)).toBe(status);
      const after = await scrape();
      const delta = (name: string, labels: Record<string, string>) => total(after, name, labels) - total(before, name, labels);
      const early = { route: 'unmatched', api: 'other', operation_type: 'none' };
      expect(delta(H, { ...early, method: 'GET', status_code: '400' })).toBe(1);
      expect(delta(H, { ...early, method: 'OTHER', status_code: '400' })).toBe(1);
      expect(delta(H, { ...early, method: 'GET', status_code: '431' })).toBe(1);
      expect(delta(H, { ...early, method: 'POST', status_code: '417' })).toBe(1);
      expect(delta(H, { route: '/graphql', api: 'graphql', operation_type: 'none', method: 'GET', status_code: '400' })).toBe(1);
      // The histogram counts them too (by class), so its count and the counter agree.
      expect(delta(COUNT, { ...early, status_class: '4xx' })).toBe(4);
      expect(delta(COUNT, { route: '/graphql', status_class: '4xx' })).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('counts rate-limit refusals and exposes pool, queue, outbox, subscription and process gauges', async () => {
    const limited = await app.tenant({ rateLimitPerHour: 1 });
    const before = await scrape();
    const http = request(app.runtime.app);
    expect((await http.get('/api/v1/groups').set('X-API-Key', limited.key)).status).toBe(200);
    expect((await http.get('/api/v1/groups').set('X-API-Key', limited.key)).status).toBe(429);
    expect((await http.get('/api/v1/groups').set('X-API-Key', limited.key)).status).toBe(429);
    const after = await scrape();
    expect(total(after, 'rate_limit_refusals_total', { reason: 'key_budget' }) - total(before, 'rate_limit_refusals_total', { reason: 'key_budget' })).toBe(2);
    expect(total(after, H, { route: '/api/v1/groups', status_code: '429' }) - total(before, H, { route: '/api/v1/groups', status_code: '429' })).toBe(2);
    expect(total(after, 'db_pool_max', { pool: 'orm' })).toBe(10);
    expect(after.get('db_pool_connections')!.metrics.length).toBe(4);
    expect(after.get('job_queue_depth')!.metrics.map((m) => m.labels!.task)).toContain('webhooks:deliver');
    for (const name of ['job_queue_oldest_ready_seconds', 'job_queue_failed', 'outbox_newest_position', 'outbox_dispatched_position', 'outbox_lag_seconds', 'graphql_subscriptions_live', 'db_caller_budget_waits_total', 'db_caller_budget_refusals_total', 'db_statements_cancelled_total', 'webhook_delivery_attempts_total', 'webhook_delivery_lag_seconds_count', 'nodejs_eventloop_lag_seconds', 'process_resident_memory_bytes']) {
      expect(after.has(name), name).toBe(true);
    }
    // Writes committed events: the outbox's newest position moved and the dispatch caught up or is queued.
    expect(total(after, 'outbox_newest_position')).toBeGreaterThan(0);
    expect(total(after, 'outbox_dispatched_position')).toBeLessThanOrEqual(total(after, 'outbox_newest_position'));
  });

  it('METRICS_ENABLED=false: no /metrics route', async () => {
    const off = await startTestApp({ METRICS_ENABLED: 'false' });
    try {
      expect((await request(off.runtime.app).get('/metrics')).status).toBe(404);
      expect(off.runtime.metrics).toBeUndefined();
    } finally {
      await off.close();
    }
  });
});

describe('series stay bounded', () => {
  const REQUESTS = Number(process.env.METRICS_FUZZ_REQUESTS ?? 10_000);
  let app: TestApp;
  let server: Server;
  let t: Tenant;
  beforeAll(async () => {
    app = await startTestApp();
    t = await app.tenant({ rateLimitPerHour: 10_000_000 });
    await request(app.runtime.app).post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'seed', externalId: 'seed' });
    server = await listen(app.runtime.app, 0);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await app.close();
  });

  it(`fewer than 1,000 series after ${REQUESTS} fuzzed requests over every route`, async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The route fuzzer's requests (test/helpers/fuzz.ts), drawn from a fixed seed; megabyte bodies
    // are left out for time (a 413 adds one status per route at most, as any other status does).
    const samples = fc.sample(requestArb, { numRuns: REQUESTS, seed: 26 });
    let next = 0;
    const worker = async () => {
      while (next < samples.length) {
        const { route, params, query, body, keyHeader } = samples[next++];
        let i = 0;
        const path = '/api/v1' + route.path.replace(/:(\w+)/g, () => encodeURIComponent(params[i++] ?? 'x').replace(/\./g, '%2E'));
        const qs = new URLSearchParams(query).toString();
        const headers: Record<string, string> = {};
        if (keyHeader === 'valid') headers['x-api-key'] = t.key;
        if (keyHeader === 'garbage') headers['x-api-key'] = 'cm_' + 'A'.repeat(43);
        const send = body && body.text.length < 100_000 && route.method !== 'GET' ? body : undefined;
        if (send) headers['content-type'] = send.type;
        const res = await fetch(`${base}${qs ? `${path}?${qs}` : path}`, { method: route.method, headers, body: send?.text });
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const families = parseMetrics(await (await fetch(`${base}/metrics`)).text());
    expect(total(families, H)).toBeGreaterThanOrEqual(REQUESTS);
    const routes = new Set(families.get(H)!.metrics.map((m) => m.labels!.route));
    expect([...routes].every((r) => r === 'unmatched' || r.startsWith('/'))).toBe(true);
    const series = seriesCount(families);
    if (process.env.METRICS_DEBUG) console.log(families.get(H)!.metrics.map((m) => `${m.labels!.method} ${m.labels!.route} ${m.labels!.status_code} ${m.labels!.operation_type}`).sort().join('\n'));
    console.log(`metrics: ${series} series after ${REQUESTS} requests (${routes.size} route labels, ${families.get(H)!.metrics.length} request label sets)`);
    expect(series).toBeLessThan(1000);
  }, 600_000);
});

describe('database metrics', () => {
  let app: TestApp;
  let t: Tenant;
  beforeAll(async () => {
    // One connection per caller, a short wait for it, and a lock timeout longer than that wait.
    app = await startTestApp({ DB_CONNECTIONS_PER_CALLER: '1', DB_CALLER_WAIT_SECONDS: '1', DB_LOCK_TIMEOUT_SECONDS: '2' });
    t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  });
  afterAll(() => app.close());

  it('counts per-caller budget waits and refusals, and statements cancelled by lock_timeout', async () => {
    const http = request(app.runtime.app);
    const id = (await http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'locked' })).body.id as string;
    const scrape = async () => parseMetrics((await http.get('/metrics')).text);
    const before = await scrape();
    const locker = new Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from groups where id = $1 for update', [id]);
      // The PATCH holds the caller's one connection while it waits 2 s for the row lock;
      // the GET queues behind it for 1 s and is refused.
      const patch = http.patch(`/api/v1/groups/${id}`).set('X-API-Key', t.key).send({ name: 'waits' }).then((r) => r);
      await new Promise((r) => setTimeout(r, 200));
      const get = await http.get('/api/v1/groups').set('X-API-Key', t.key);
      expect(get.status).toBe(503);
      expect((await patch).status).toBe(503);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(delta('db_caller_budget_waits_total')).toBeGreaterThanOrEqual(1);
    expect(delta('db_caller_budget_refusals_total')).toBe(1);
    expect(delta('db_statements_cancelled_total', { reason: 'lock_timeout' })).toBe(1);
    expect(delta('db_statements_cancelled_total', { reason: 'statement_timeout' })).toBe(0);
    expect(delta(H, { route: '/api/v1/groups/:identifier', method: 'PATCH', status_code: '503' })).toBe(1);
  });
});

describe('live subscriptions gauge', () => {
  it('counts the live graphql-ws subscriptions of the instance', async () => {
    const app = await startTestApp();
    const server = await listen(app.runtime.app, 0);
    app.runtime.attach(server);
    const t = await app.tenant();
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { apiKey: t.key }, retryAttempts: 0 });
    const live = async () => total(parseMetrics((await request(app.runtime.app).get('/metrics')).text), 'graphql_subscriptions_live');
    const until = async (n: number) => {
      for (let i = 0; i < 100 && (await live()) !== n; i++) await new Promise((r) => setTimeout(r, 50));
      return live();
    };
    try {
      const sink = { next: () => undefined, error: () => undefined, complete: () => undefined };
      const stops = [client.subscribe({ query: 'subscription { events { id } }' }, sink), client.subscribe({ query: 'subscription { events { id } }' }, sink)];
      expect(await until(2)).toBe(2);
      stops[0]();
      expect(await until(1)).toBe(1);
      await client.dispose();
      expect(await until(0)).toBe(0);
    } finally {
      await client.dispose();
      await new Promise((r) => server.close(r));
      await app.close();
    }
  });
});
