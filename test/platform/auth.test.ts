import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: 'true', AUTH_FAILURES_PER_WINDOW: '3' });
});
afterAll(() => app.close());

const problem = (res: any, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.status).toBe(status);
};

describe('API key authentication', () => {
  it('401 without a key, with no rate-limit headers', async () => {
    const res = await app.http.get('/api/v1/groups');
    problem(res, 401);
    expect(res.headers).not.toHaveProperty('x-ratelimit-limit');
  });

  it('401 for an unknown or malformed key', async () => {
    const t = await app.tenant();
    problem(await app.http.get('/api/v1/groups').set('X-API-Key', t.key.slice(0, -2) + 'xx').set('X-Forwarded-For', '10.9.0.1'), 401);
    problem(await app.http.get('/api/v1/groups').set('X-API-Key', 'nonsense').set('X-Forwarded-For', '10.9.0.2'), 401);
  });

  it('accepts the key in the header or the api_key query; the header wins', async () => {
    const t = await app.tenant();
    expect((await app.http.get('/api/v1/groups').set('X-API-Key', t.key)).status).toBe(200);
    expect((await app.http.get(`/api/v1/groups?api_key=${t.key}`)).status).toBe(200);
    const wrongHeader = await app.http.get(`/api/v1/groups?api_key=${t.key}`).set('X-API-Key', 'bad').set('X-Forwarded-For', '10.9.0.3');
    problem(wrongHeader, 401);
  });

  it('403 for a revoked key, immediately', async () => {
    const t = await app.tenant();
    expect((await app.http.get('/api/v1/groups').set('X-API-Key', t.key)).status).toBe(200);
    await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: t.keyId });
    problem(await app.http.get('/api/v1/groups').set('X-API-Key', t.key), 403);
  });

  it('scopes: read allows GET only, write allows writes; bare resource both; other resources 403', async () => {
    const reader = await app.tenant({ scopes: ['groups:read'] });
    const writer = await app.tenant({ scopes: ['groups:write'] });
    const both = await app.tenant({ scopes: ['groups'] });
    const stranger = await app.tenant({ scopes: ['members'] });
    expect((await app.http.get('/api/v1/groups').set('X-API-Key', reader.key)).status).toBe(200);
    problem(await app.http.post('/api/v1/groups').set('X-API-Key', reader.key).send({ name: 'x' }), 403);
    expect((await app.http.post('/api/v1/groups').set('X-API-Key', writer.key).send({ name: 'x' })).status).toBe(201);
    problem(await app.http.get('/api/v1/groups').set('X-API-Key', writer.key), 403);
    expect((await app.http.post('/api/v1/groups').set('X-API-Key', both.key).send({ name: 'x' })).status).toBe(201);
    expect((await app.http.get('/api/v1/groups').set('X-API-Key', both.key)).status).toBe(200);
    const denied = await app.http.get('/api/v1/groups').set('X-API-Key', stranger.key);
    problem(denied, 403);
    expect(denied.headers['x-ratelimit-limit']).toBe('1000');
  });

  it('the same scopes apply through GraphQL', async () => {
    const reader = await app.tenant({ scopes: ['groups:read'] });
    const res = await app.http
      .post('/graphql')
      .set('X-API-Key', reader.key)
      .send({ query: 'mutation { createGroup(input: { name: "x" }) { id } }' });
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const ok = await app.http.post('/graphql').set('X-API-Key', reader.key).send({ query: '{ groups { size } }' });
    expect(ok.body.data.groups.size).toBe(0);
  });

  it('GraphQL: no key gets UNAUTHENTICATED on data, a bad key 401, operator-only mutations are forbidden to keys', async () => {
    const anon = await app.http.post('/graphql').send({ query: '{ groups { size } }' });
    expect(anon.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const bad = await app.http.post('/graphql').set('X-API-Key', 'bad').set('X-Forwarded-For', '10.9.0.4').send({ query: '{ groups { size } }' });
    expect(bad.status).toBe(401);
    const t = await app.tenant();
    const res = await app.http
      .post('/graphql')
      .set('X-API-Key', t.key)
      .send({ query: 'mutation { createCommunity(input: { name: "x" }) { id } }' });
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const wrongToken = await app.http
      .post('/graphql')
      .set('Authorization', 'Bearer wrong-token')
      .send({ query: 'mutation { createCommunity(input: { name: "x" }) { id } }' });
    expect(wrongToken.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('operator mutations validate their input', async () => {
    await expect(app.operator('mutation { createApiKey(input: { communityId: "00000000-0000-4000-8000-000000000000" }) { id } }')).rejects.toThrow(/NOT_FOUND/);
    const t = await app.tenant();
    await expect(
      app.operator('mutation($c: ID!) { createApiKey(input: { communityId: $c, scopes: ["bogus"] }) { id } }', { c: t.communityId }),
    ).rejects.toThrow(/Unknown scopes: bogus/);
  });

  it('failed key attempts are limited per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await app.http.get('/api/v1/groups').set('X-API-Key', `wrong-${i}`).set('X-Forwarded-For', '10.20.30.40');
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // Another address is unaffected, and a valid key still works from the blocked one.
    problem(await app.http.get('/api/v1/groups').set('X-API-Key', 'wrong').set('X-Forwarded-For', '10.20.30.41'), 401);
    const t = await app.tenant();
    expect((await app.http.get('/api/v1/groups').set('X-API-Key', t.key).set('X-Forwarded-For', '10.20.30.40')).status).toBe(200);
  });

  it('a warm key costs no lookup; a revoked one is refused at once all the same', async () => {
    const t = await app.tenant();
    const lookups = () => spy.mock.calls.filter(([q]) => (q as { name?: string })?.name === 'find-api-key').length;
    const spy = vi.spyOn(app.runtime.pool, 'query');
    try {
      for (let i = 0; i < 3; i++) expect((await app.http.get('/api/v1/groups').set('X-API-Key', t.key)).status).toBe(200);
      expect(lookups()).toBe(1);
      await app.operator('mutation($id: ID!) { revokeApiKey(id: $id) }', { id: t.keyId });
      problem(await app.http.get('/api/v1/groups').set('X-API-Key', t.key), 403);
      expect(lookups()).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('stores only a hash of the key', async () => {
    const t = await app.tenant();
    const { rows } = await app.runtime.pool.query('select key_hash from api_keys where id = $1', [t.keyId]);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].key_hash).not.toContain(t.key);
  });
});
