import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app';
import { serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { redisAvailable } from '../helpers/redis';
import { testDatabaseUrl } from '../helpers/database';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';


/** `total` requests with one key spread over two processes, `concurrency` at a time. */
async function hammer(services: ServiceProcess[], key: string, total: number, concurrency = 24) {
  const results: { status: number; limit: number; remaining: number; reset: number; retryAfter: number | null; type: string }[] = [];
  const queue = Array.from({ length: total }, (_, i) => i);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const res = await fetch(`${services[i % services.length].url}/api/v1/groups?limit=1`, { headers: { 'x-api-key': key } });
        const body = (await res.json()) as { type?: string };
        results.push({
          status: res.status,
          type: res.status === 429 ? `${res.headers.get('content-type')?.split(';')[0]} ${body.type}` : '',
          retryAfter: res.headers.has('retry-after') ? Number(res.headers.get('retry-after')) : null,
          limit: Number(res.headers.get('x-ratelimit-limit')),
          remaining: Number(res.headers.get('x-ratelimit-remaining')),
          reset: Number(res.headers.get('x-ratelimit-reset')),
        });
      }
    }),
  );
  return results;
}

const stores: [string, Record<string, string>, boolean][] = [
  ['PostgreSQL', {}, true],
  ['Redis', { REDIS_URL: redisUrl }, await redisAvailable(redisUrl)],
];

describe.each(stores)('two instances sharing one budget (%s store)', (_name, env, available) => {
  let services: ServiceProcess[] = [];
  beforeAll(async () => {
    if (!available) return;
    const common = { DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN, ...env };
    services = await Promise.all([startService(common), startService(common)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
  });

  it.runIf(available)('exactly 1000 of 1200 pass; Remaining runs 999..0 without duplicates; Reset agrees', async () => {
    const key = (await serviceTenant(services[0].url, ADMIN_TOKEN, 'multi', 1000)).key;
    const results = await hammer(services, key, 1200);
    const passed = results.filter((r) => r.status === 200);
    expect(passed.length).toBe(1000);
    expect(results.filter((r) => r.status === 429).length).toBe(200);
    const remaining = passed.map((r) => r.remaining).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    const resets = new Set(results.map((r) => r.reset));
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  }, 120_000);

  it.runIf(available)('a small budget under 64 concurrent requests (batches straddle it): exactly 30 of 150 pass, the others 429 with the headers', async () => {
    const key = (await serviceTenant(services[0].url, ADMIN_TOKEN, 'multi-small', 30)).key;
    const results = await hammer(services, key, 150, 64);
    const passed = results.filter((r) => r.status === 200);
    expect(passed.map((r) => r.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(120);
    for (const r of refused) {
      expect(r).toMatchObject({ status: 429, limit: 30, remaining: 0, type: 'application/problem+json /problems/rate-limited' });
      expect(r.retryAfter).toBeGreaterThan(3500);
      expect(r.retryAfter).toBeLessThanOrEqual(3600);
    }
    const resets = new Set(results.map((r) => r.reset));
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  }, 120_000);
});
