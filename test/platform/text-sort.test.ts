import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';

let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
});
afterAll(() => app.close());

const get = async (url: string) => (await app.http.get(url).set('X-API-Key', t.key).expect(200)).body.results;

describe('text sorts are case-insensitive and stable', () => {
  it('groups by name: descending puts Zeta before x2 (byte order would not); equal names keep creation order', async () => {
    for (const name of ['x2', 'Zeta', 'beta', 'alpha', 'Beta']) {
      await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name }).expect(201);
    }
    const names = async (sort: string) => (await get(`/api/v1/groups?sort=${encodeURIComponent(sort)}`)).map((g: any) => g.name);
    expect(await names('name')).toEqual(['alpha', 'beta', 'Beta', 'x2', 'Zeta']);
    expect(await names('name:DESC')).toEqual(['Zeta', 'x2', 'beta', 'Beta', 'alpha']);
    expect(await names('name:desc, createdAt:desc')).toEqual(['Zeta', 'x2', 'Beta', 'beta', 'alpha']);
  });

  it('members by lastName and firstName', async () => {
    for (const [firstName, lastName] of [['bob', 'smith'], ['Anna', 'Smith'], ['carl', 'Adams'], ['Dora', 'adams']]) {
      await app.http.post('/api/v1/members').set('X-API-Key', t.key).send({ firstName, lastName }).expect(201);
    }
    const people = async (sort: string) => (await get(`/api/v1/members?sort=${encodeURIComponent(sort)}`)).map((m: any) => m.firstName);
    expect(await people('lastName,firstName')).toEqual(['carl', 'Dora', 'Anna', 'bob']);
    expect(await people('firstName:desc')).toEqual(['Dora', 'carl', 'bob', 'Anna']);
  });

  it('an index serves each text sort (the planner may use it without sorting)', async () => {
    const cases = [
      ['groups', 'lower(t.name)', 'groups_community_lower_name_idx'],
      ['members', 'lower(t.first_name)', 'members_community_lower_first_name_idx'],
      ['members', 'lower(t.last_name)', 'members_community_lower_last_name_idx'],
    ];
    const client = await app.runtime.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      await client.query('set local enable_sort = off');
      for (const [table, key, index] of cases) {
        const { rows } = await client.query(
          `explain select t.id from ${table} t where t.community_id = $1 order by ${key} asc, t.created_at asc, t.id asc limit 21`,
          [t.communityId],
        );
        expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain(index);
      }
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});
