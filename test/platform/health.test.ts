import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded';
import { bootResponder } from '../../src/observability/health';
import { freePort } from '../helpers/process';
import { startRuntime, listen, type Runtime } from '../../src/runtime';

const until = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
};

describe('GET /livez and /readyz', () => {
  // A PostgreSQL of this test's own, so stopping it disturbs nothing else.
  const dir = path.resolve('.data', `health-pg-${process.pid}`);
  let pg: EmbeddedServer | undefined;
  let runtime: Runtime | undefined;
  afterAll(async () => {
    await runtime?.close().catch(() => undefined);
    await pg?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('readiness follows the database (503 while it is stopped, 200 when it is back); liveness stays 200 and never asks it', async () => {
    const port = await freePort();
    pg = await startEmbeddedPostgres({ dir, port, fast: true });
    const url = await ensureDatabase(pg.url, 'health');
    runtime = await startRuntime(loadConfig({ LOG_LEVEL: 'silent' }), url);
    const http = request(runtime.app);
    for (const path of ['/livez', '/readyz', '/health', '/ready']) {
      const res = await http.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers['x-request-id']).toBeTruthy();
    }

    await pg.stop();
    for (const path of ['/readyz', '/ready']) {
      const res = await http.get(path);
      expect(res.status, path).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 503, detail: 'The database is not reachable' });
      expect(res.headers['retry-after']).toBeDefined();
    }
    expect((await http.get('/livez')).status).toBe(200);
    expect((await http.get('/health')).status).toBe(200);

    pg = await startEmbeddedPostgres({ dir, port, fast: true });
    expect(await until(async () => (await http.get('/readyz')).status === 200)).toBe(true);
    expect((await http.get('/livez')).status).toBe(200);

    runtime.health.draining = true;
    const draining = await http.get('/readyz');
    expect(draining.status).toBe(503);
    expect(draining.body.detail).toBe('The service is shutting down');
    expect(draining.headers.connection).toBe('close');
    expect((await http.get('/livez')).status).toBe(200);
  }, 120_000);

  it('while the service boots (migrations): /livez 200, /readyz and everything else 503 problem+json', async () => {
    const server = await listen(bootResponder, 0);
    try {
      const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
      expect((await fetch(`${base}/livez`)).status).toBe(200);
      for (const path of ['/readyz', '/ready', '/health', '/api/v1/groups']) {
        const res = await fetch(`${base}${path}`, { headers: { 'x-request-id': 'boot-1' } });
        expect(res.status, path).toBe(503);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(res.headers.get('x-request-id')).toBe('boot-1');
        expect(await res.json()).toMatchObject({ status: 503, instance: path, requestId: 'boot-1' });
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('X-Request-Id: the caller\'s when 1-128 visible ASCII characters, else a generated one; on every answer', async () => {
    const { startTestApp } = await import('../helpers/app');
    const app = await startTestApp();
    try {
      const http = request(app.runtime.app);
      const ok = ['a', 'req-1_2.3:4/5+6=7', '~'.repeat(128), '!#$%&()*'];
      for (const id of ok) expect((await http.get('/livez').set('X-Request-Id', id)).headers['x-request-id']).toBe(id);
      for (const id of ['x'.repeat(129), 'has space', 'tab\there', 'é']) {
        const res = await http.get('/api/v1/nothing').set('X-Request-Id', id);
        expect(res.headers['x-request-id']).not.toBe(id);
        expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
      for (const path of ['/api/v1/groups', '/graphql', '/metrics', '/nothing', '/readyz']) {
        expect((await http.get(path)).headers['x-request-id'], path).toMatch(/^[0-9a-f-]{36}$/);
      }
    } finally {
      await app.close();
    }
  });
});
