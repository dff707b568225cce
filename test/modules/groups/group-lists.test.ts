import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';

let app: TestApp;
let t: Tenant;
const names = ['delta', 'alpha', 'charlie', 'bravo', 'alpha', 'echo', 'bravo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const TOTAL = 25;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  for (let i = 0; i < TOTAL; i++) {
    const res = await app.http
      .post('/api/v1/groups')
      .set('X-API-Key', t.key)
      .send({ name: names[i % names.length], externalId: `g${i}` });
    expect(res.status).toBe(201);
  }
  // Touch a few so modifiedAt differs from createdAt order.
  for (const ext of ['g3', 'g0', 'g7']) {
    await new Promise((r) => setTimeout(r, 3));
    await app.http.patch(`/api/v1/groups/${ext}?key=externalId`).set('X-API-Key', t.key).send({ about: 'touched' });
  }
});
afterAll(() => app.close());

const get = (query: string) => app.http.get(`/api/v1/groups${query}`).set('X-API-Key', t.key);
const all = async (query = '') => (await get(`?limit=100${query}`)).body.results as any[];

describe('GET /api/v1/groups: pagination', () => {
  it('defaults: limit 20, skip 0, creation order, next link but no prev', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 20, skip: 0, size: 20 });
    expect(res.body.results.map((g: any) => g.externalId)).toEqual(Array.from({ length: 20 }, (_, i) => `g${i}`));
    expect(res.body._links.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(res.body._links.self).toBe(`${res.body._links.base}/api/v1/groups`);
    expect(res.body._links.next).toBe('/api/v1/groups?skip=20&limit=20');
    expect(res.body._links).not.toHaveProperty('prev');
  });

  it('skip=10&limit=10 holds items 10 through 19, with next and prev', async () => {
    const everything = await all();
    const res = await get('?skip=10&limit=10');
    expect(res.body).toMatchObject({ limit: 10, skip: 10, size: 10 });
    expect(res.body.results).toEqual(everything.slice(10, 20));
    expect(res.body._links.next).toBe('/api/v1/groups?skip=20&limit=10');
    expect(res.body._links.prev).toBe('/api/v1/groups?skip=0&limit=10');
  });

  it('the last page has prev but no next; past the end is an empty page', async () => {
    const last = await get('?skip=20&limit=10');
    expect(last.body.size).toBe(5);
    expect(last.body._links).not.toHaveProperty('next');
    expect(last.body._links.prev).toBe('/api/v1/groups?skip=10&limit=10');
    const beyond = await get('?skip=100');
    expect(beyond.body).toMatchObject({ size: 0, results: [] });
  });

  it('links keep sort and other parameters but never api_key', async () => {
    const res = await app.http.get(`/api/v1/groups?api_key=${t.key}&sort=name:desc&limit=5`);
    expect(res.status).toBe(200);
    expect(res.body._links.self).not.toContain('api_key');
    expect(res.body._links.self).toContain('sort=name%3Adesc');
    expect(res.body._links.next).toBe('/api/v1/groups?sort=name%3Adesc&limit=5&skip=5');
  });

  it.each(['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'limit=1.5', 'skip=-1', 'skip=x', 'limit=99999999999'])(
    '400 for %s naming the parameter',
    async (q) => {
      const res = await get(`?${q}`);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors[0].pointer).toBe(`#/query/${q.split('=')[0]}`);
    },
  );

  it('limit=100 and limit=1 are accepted', async () => {
    expect((await get('?limit=100')).body.size).toBe(TOTAL);
    expect((await get('?limit=1')).body.size).toBe(1);
  });
});

describe('GET /api/v1/groups: sorting', () => {
  const key = (field: string) => (g: any) => g[field];
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

  it.each(['name', 'createdAt', 'modifiedAt'])('sorts by %s both ways; a bare field means asc', async (field) => {
    const asc = await all(`&sort=${field}:asc`);
    const bare = await all(`&sort=${field}`);
    const desc = await all(`&sort=${field}:desc`);
    const values = asc.map(key(field));
    expect([...values].sort(cmp)).toEqual(values);
    expect(desc.map(key(field))).toEqual([...values].sort(cmp).reverse());
    expect(bare).toEqual(asc);
  });

  it('later specifications break ties of earlier ones, then createdAt asc and id', async () => {
    const byName = await all('&sort=name:asc');
    const alphas = byName.filter((g) => g.name === 'alpha');
    expect(alphas.length).toBeGreaterThan(1);
    // Tie on name: creation order.
    expect(alphas.map((g) => g.createdAt)).toEqual([...alphas.map((g) => g.createdAt)].sort(cmp));
    const tieDesc = await all('&sort=name:asc,createdAt:desc');
    const alphasDesc = tieDesc.filter((g) => g.name === 'alpha');
    expect(alphasDesc.map((g) => g.id)).toEqual([...alphas].reverse().map((g) => g.id));
  });

  it('pages never overlap or skip records under a sort with ties', async () => {
    const seen: string[] = [];
    for (let skip = 0; skip < TOTAL; skip += 4) {
      seen.push(...(await get(`?sort=name:desc&limit=4&skip=${skip}`)).body.results.map((g: any) => g.id));
    }
    expect(new Set(seen).size).toBe(TOTAL);
    expect(seen).toEqual((await all('&sort=name:desc')).map((g) => g.id));
  });

  it.each(['about:asc', 'name:up', 'name:asc:desc', 'membershipCount', ',', 'name:asc,,createdAt'])('400 for sort=%s', async (sort) => {
    const res = await get(`?sort=${encodeURIComponent(sort)}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].pointer).toBe('#/query/sort');
  });
});
