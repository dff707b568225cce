import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { expectProblem } from '../helpers/problem';
import { redisAvailable } from '../helpers/redis';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const stores: [string, Record<string, string>, boolean][] = [
  ['PostgreSQL', {}, true],
  ['Redis', { REDIS_URL: redisUrl }, await redisAvailable(redisUrl)],
];

describe.each(stores)('rate limit with the %s store', (_name, env, available) => {
  let app: TestApp;
  afterAll(() => app?.close());
  afterEach(() => vi.useRealTimers());

  it.runIf(available)('counts down per key, keeps Reset in the window, 429 with Retry-After on the 4th', async () => {
    app = await startTestApp(env);
    const t = await app.tenant({ rateLimitPerHour: 3 });
    const started = Math.floor(Date.now() / 1000);
    const seen: { status: number; limit: string; remaining: string; reset: string }[] = [];
    for (let i = 0; i < 4; i++) {
      // Errors count too: every request with a valid key is counted, whatever its outcome.
      const res = await app.http.get(i === 1 ? '/api/v1/groups/nope' : '/api/v1/groups').set('X-API-Key', t.key);
      seen.push({
        status: res.status,
        limit: res.headers['x-ratelimit-limit'],
        remaining: res.headers['x-ratelimit-remaining'],
        reset: res.headers['x-ratelimit-reset'],
      });
      if (res.status === 429) {
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        const retry = Number(res.headers['retry-after']);
        expect(retry).toBeGreaterThan(3500);
        expect(retry).toBeLessThanOrEqual(3600);
      }
    }
    expect(seen.map((s) => s.status)).toEqual([200, 404, 200, 429]);
    expect(seen.map((s) => s.limit)).toEqual(['3', '3', '3', '3']);
    expect(seen.map((s) => s.remaining)).toEqual(['2', '1', '0', '0']);
    const resets = new Set(seen.map((s) => s.reset));
    expect(resets.size).toBe(1);
    const reset = Number([...resets][0]);
    expect(reset).toBeGreaterThanOrEqual(started + 3599);
    expect(reset).toBeLessThanOrEqual(started + 3602);
    // Another key has its own budget.
    const t2 = await app.tenant();
    const other = await app.http.get('/api/v1/groups').set('X-API-Key', t2.key);
    expect(other.headers['x-ratelimit-limit']).toBe('1000');
    expect(other.headers['x-ratelimit-remaining']).toBe('999');
  });

  it.runIf(available)('concurrent requests straddling the limit: exactly the limit passes, the rest are 429 with the headers', async () => {
    app ??= await startTestApp(env);
    const t = await app.tenant({ rateLimitPerHour: 10 });
    const first = await app.http.get('/api/v1/groups').set('X-API-Key', t.key);
    expect(first.headers['x-ratelimit-remaining']).toBe('9');
    // 24 at once: the limiter counts them in batches, one of which holds the 10th position.
    const all = await Promise.all(Array.from({ length: 24 }, () => app.http.get('/api/v1/groups').set('X-API-Key', t.key)));
    const passed = all.filter((r) => r.status === 200);
    expect(passed).toHaveLength(9);
    expect(passed.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const refused = all.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(15);
    for (const res of refused) {
      const body = expectProblem(res, 429);
      expect(body).toMatchObject({ type: '/problems/rate-limited', title: 'Too Many Requests', detail: 'The API key exceeded its hourly request allowance' });
      expect(res.headers['x-ratelimit-limit']).toBe('10');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      const retry = Number(res.headers['retry-after']);
      expect(retry).toBeGreaterThan(3500);
      expect(retry).toBeLessThanOrEqual(3600);
    }
    const resets = all.concat(first).map((r) => Number(r.headers['x-ratelimit-reset']));
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  });

  it.runIf(available)('GraphQL requests with a key draw on the same budget', async () => {
    app ??= await startTestApp(env);
    const t = await app.tenant({ rateLimitPerHour: 2 });
    await app.http.get('/api/v1/groups').set('X-API-Key', t.key);
    const res = await app.http.post('/graphql').set('X-API-Key', t.key).send({ query: '{ groups { size } }' });
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    const over = await app.http.post('/graphql').set('X-API-Key', t.key).send({ query: '{ groups { size } }' });
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
  });
});

describe('rate limit window (PostgreSQL store)', () => {
  it('the first request after the hour starts a new window with the counter at 1', async () => {
    const app = await startTestApp();
    try {
      const t = await app.tenant({ rateLimitPerHour: 2 });
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now());
      await app.http.get('/api/v1/groups').set('X-API-Key', t.key);
      await app.http.get('/api/v1/groups').set('X-API-Key', t.key);
      expect((await app.http.get('/api/v1/groups').set('X-API-Key', t.key)).status).toBe(429);
      vi.setSystemTime(Date.now() + 3601_000);
      const fresh = await app.http.get('/api/v1/groups').set('X-API-Key', t.key);
      expect(fresh.status).toBe(200);
      expect(fresh.headers['x-ratelimit-remaining']).toBe('1');
      expect(Number(fresh.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 3599);
    } finally {
      vi.useRealTimers();
      await app.close();
    }
  });
});
