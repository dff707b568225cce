import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS_FIRST_SKIP } from '../../src/db/lean';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { createGroup, createMembers, createMembershipRows } from '../helpers/factories';
import { withSqlCount } from '../helpers/sql-count';
import type { Group } from '../../src/modules/groups/group.entity';
import { testDatabaseUrl } from '../helpers/database';

/**
 * Pages at a skip of KEYS_FIRST_SKIP or more find their rows' ids first and read those rows
 * after (src/db/lean.ts): the same rows, in the same order, with the same next-page answer as
 * the plain OFFSET, and still only the community's own rows. The expected pages come from SQL
 * run here as the database owner (ordering ties by id, as the service's ORDER BY does).
 */
let app: TestApp;
let t: Tenant;
let other: Tenant;
let db: Client;
let group: Group;
const N = KEYS_FIRST_SKIP + 60;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  other = await app.tenant();
  // The communities' rows interleave in creation order; last names repeat, so a sort by them ties.
  const first = await createMembers(app, t.communityId, Array.from({ length: N / 2 }, (_, i) => ({ lastName: `L${i % 7}` })));
  await createMembers(app, other.communityId, Array.from({ length: 300 }, (_, i) => ({ lastName: `L${i % 7}` })));
  const second = await createMembers(app, t.communityId, Array.from({ length: N / 2 }, (_, i) => ({ lastName: `L${i % 5}` })));
  group = await createGroup(app, t.communityId);
  // Order numbers 1..N in reverse creation order of the members.
  await createMembershipRows(app, group, [...first, ...second].reverse());
  db = new Client({ connectionString: testDatabaseUrl() });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await app?.close();
});

const get = async (path: string, tenant = t) => {
  const res = await app.http.get(path).set('X-API-Key', tenant.key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { results: { id: string; memberExternalId?: string }[]; size: number; skip: number; limit: number; _links: { next?: string } };
};
const ids = async (sql: string, params: unknown[]) => (await db.query<{ id: string }>(sql, params)).rows.map((r) => r.id);

describe(`pages at skip >= ${KEYS_FIRST_SKIP}`, () => {
  it('members in creation order: the same rows as OFFSET, the next link right to the end', async () => {
    const all = await ids('select id from members where community_id = $1 order by created_at, id', [t.communityId]);
    expect(all).toHaveLength(N);
    for (const [skip, limit] of [[KEYS_FIRST_SKIP - 20, 20], [KEYS_FIRST_SKIP, 20], [KEYS_FIRST_SKIP + 1, 7], [N - 30, 100], [N, 20], [N + 500, 5]]) {
      const page = await get(`/api/v1/members?skip=${skip}&limit=${limit}`);
      expect(page.results.map((m) => m.id), `skip ${skip}`).toEqual(all.slice(skip, skip + limit));
      expect(page.size).toBe(Math.max(0, Math.min(limit, N - skip)));
      expect(Boolean(page._links.next), `next at skip ${skip}`).toBe(skip + limit < N);
    }
  });

  it('a sort with ties (lastName, then createdAt, id) and a descending one', async () => {
    const byName = await ids('select id from members where community_id = $1 order by lower(last_name), created_at, id', [t.communityId]);
    const page = await get(`/api/v1/members?sort=lastName&skip=${KEYS_FIRST_SKIP}&limit=50`);
    expect(page.results.map((m) => m.id)).toEqual(byName.slice(KEYS_FIRST_SKIP, KEYS_FIRST_SKIP + 50));
    const desc = await ids('select id from members where community_id = $1 order by created_at desc, id', [t.communityId]);
    const back = await get(`/api/v1/members?sort=createdAt:desc&skip=${KEYS_FIRST_SKIP + 3}&limit=40`);
    expect(back.results.map((m) => m.id)).toEqual(desc.slice(KEYS_FIRST_SKIP + 3, KEYS_FIRST_SKIP + 43));
  });

  it("a group's memberships by orderNumber, by creation and by last change, with each member's externalId", async () => {
    const byOrder = await db.query<{ id: string; ext: string }>(
      `select gm.id, m.external_id as ext from group_memberships gm join members m on m.id = gm.member_id
        where gm.community_id = $1 and gm.group_id = $2 order by gm.order_number, gm.created_at, gm.id`,
      [t.communityId, group.id],
    );
    const page = await get(`/api/v1/groups/${group.id}/memberships?sort=orderNumber&skip=${KEYS_FIRST_SKIP}&limit=100`);
    expect(page.results.map((r) => [r.id, r.memberExternalId])).toEqual(byOrder.rows.slice(KEYS_FIRST_SKIP).map((r) => [r.id, r.ext]));
    expect(page._links.next).toBeUndefined();
    const byCreation = await ids('select id from group_memberships where community_id = $1 and group_id = $2 order by created_at, id', [t.communityId, group.id]);
    const again = await get(`/api/v1/groups/${group.id}/memberships?skip=${KEYS_FIRST_SKIP + 10}&limit=20`);
    expect(again.results.map((r) => r.id)).toEqual(byCreation.slice(KEYS_FIRST_SKIP + 10, KEYS_FIRST_SKIP + 30));
    const byChange = await ids('select id from group_memberships where community_id = $1 and group_id = $2 order by modified_at desc, created_at, id', [t.communityId, group.id]);
    const changed = await get(`/api/v1/groups/${group.id}/memberships?sort=modifiedAt:desc&skip=${KEYS_FIRST_SKIP - 5}&limit=30`);
    expect(changed.results.map((r) => r.id)).toEqual(byChange.slice(KEYS_FIRST_SKIP - 5, KEYS_FIRST_SKIP + 25));
  });

  it("another community's key sees only its own rows (an empty page past them), and the statement count stays that of a first page", async () => {
    const page = await get(`/api/v1/members?skip=${KEYS_FIRST_SKIP}`, other);
    expect(page.results).toEqual([]);
    const near = await get('/api/v1/members?skip=290&limit=100', other);
    const theirs = await ids('select id from members where community_id = $1 order by created_at, id', [other.communityId]);
    expect(near.results.map((m) => m.id)).toEqual(theirs.slice(290));
    await get(`/api/v1/members?skip=${KEYS_FIRST_SKIP}`); // warm key cache
    const deep = await withSqlCount(app.runtime, () => get(`/api/v1/members?skip=${KEYS_FIRST_SKIP}`));
    const shallow = await withSqlCount(app.runtime, () => get('/api/v1/members'));
    expect(deep.orm).toBe(shallow.orm);
  });
});
