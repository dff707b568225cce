import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded';
import { ADMIN_TOKEN } from '../helpers/app';
import { freePort, serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';



const timed = async (url: string, init?: RequestInit) => {
  const started = Date.now();
  const res = await fetch(url, init);
  const body = await res.text();
  return { status: res.status, ms: Date.now() - started, body, headers: res.headers };
};

describe('database outage', () => {
  const dir = path.resolve('.data', `outage-pg-${process.pid}`);
  let pg: EmbeddedServer | undefined;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await service?.stop();
    await pg?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 problems quickly while PostgreSQL is down, and recovers by itself', async () => {
    const port = await freePort();
    pg = await startEmbeddedPostgres({ dir, port, fast: true });
    const url = await ensureDatabase(pg.url, 'outage');
    service = await startService({ DATABASE_URL: url, ADMIN_TOKEN });
    const key = (await serviceTenant(service.url, ADMIN_TOKEN, 'o')).key;
    const get = () => timed(`${service!.url}/api/v1/groups`, { headers: { 'x-api-key': key } });
    expect((await get()).status).toBe(200);

    await pg.stop();
    for (let i = 0; i < 3; i++) {
      const res = await get();
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ status: 503 });
      expect(res.body).not.toMatch(/ECONNREFUSED|postgres|select /i);
      expect(res.ms).toBeLessThan(6000);
    }
    const write = await timed(`${service.url}/api/v1/groups`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'during outage' }),
    });
    expect(write.status).toBe(503);
    expect((await timed(`${service.url}/ready`)).status).toBe(503);
    expect((await timed(`${service.url}/health`)).status).toBe(200);
    const gql = await timed(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ groups { size } }' }),
    });
    expect(gql.status, gql.body).toBe(503);

    pg = await startEmbeddedPostgres({ dir, port, fast: true });
    let recovered = false;
    for (let i = 0; i < 50 && !recovered; i++) {
      recovered = (await get()).status === 200;
      if (!recovered) await new Promise((r) => setTimeout(r, 200));
    }
    expect(recovered).toBe(true);
    expect((await timed(`${service.url}/ready`)).status).toBe(200);
  });
});

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

describe('Redis outage', () => {
  it.runIf(hasRedisServer)('keeps counting in PostgreSQL when Redis stops, never a 500', async () => {
    const port = await freePort();
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 300));
    const service = await startService({ DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN, REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const key = (await serviceTenant(service.url, ADMIN_TOKEN, 'o')).key;
      const get = () => timed(`${service.url}/api/v1/groups`, { headers: { 'x-api-key': key } });
      const before = await get();
      expect(before.status).toBe(200);
      redis.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await get();
        statuses.push(res.status);
        expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      }
      expect(statuses.every((s) => s === 200)).toBe(true);
    } finally {
      redis.kill('SIGKILL');
      await service.stop();
    }
  });
});
