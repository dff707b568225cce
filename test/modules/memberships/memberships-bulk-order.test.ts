import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createGroup, createMember, createMembers, expectProblem } from '../../helpers/factories';
import type { Member } from '../../../src/modules/members/member.entity';
import { testDatabaseUrl } from '../../helpers/database';

let app: TestApp;
let t: Tenant;
let other: Tenant;
const auth = (key = t.key) => ({ 'X-API-Key': key });
const url = (groupIdentifier: string, rest = '') => `/api/v1/groups/${groupIdentifier}/memberships${rest}`;
const MISSING = '3f1d7c1e-0000-4000-8000-000000000000';

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  other = await app.tenant();
});
afterAll(() => app.close());

const members = (n: number): Promise<Member[]> => createMembers(app, t.communityId, Array.from({ length: n }, () => ({})));
const bulk = (groupId: string, body: unknown, q = '', key = t.key) => app.http.post(url(groupId, `/_bulk${q}`)).set(auth(key)).send(body as object);
const count = async (groupId: string) => (await app.http.get(`/api/v1/groups/${groupId}`).set(auth())).body.membershipCount;
/** The group's memberships by orderNumber: [id, orderNumber, externalId][] */
async function ordered(groupId: string) {
  const res = await app.http.get(url(groupId, '?sort=orderNumber&limit=100')).set(auth());
  expect(res.status).toBe(200);
  return res.body.results.map((r: { id: string; orderNumber: number; externalId: string | null }) => [r.id, r.orderNumber, r.externalId]);
}

describe('POST /api/v1/groups/{groupIdentifier}/memberships/_bulk', () => {
  it('201 with one ApiInsertResponse per item, in input order; numbers continue max+1..max+n', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(4);
    await app.http.post(url(group.id)).set(auth()).send({ memberId: ms[0].id }).expect(201);
    const res = await bulk(group.id, {
      groupMemberships: [
        { memberExternalId: ms[3].externalId, externalId: 'b-3', title: 'Three' },
        { memberId: ms[1].id },
        { memberId: ms[2].id, memberExternalId: ms[2].externalId, externalId: 'b-2' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual([
      { id: expect.any(String), externalId: 'b-3' },
      { id: expect.any(String), externalId: null },
      { id: expect.any(String), externalId: 'b-2' },
    ]);
    const list = await app.http.get(url(group.id)).set(auth());
    expect(list.body.results.slice(1).map((r: { id: string }) => r.id)).toEqual(res.body.map((r: { id: string }) => r.id));
    expect(list.body.results.map((r: { orderNumber: number }) => r.orderNumber)).toEqual([1, 2, 3, 4]);
    expect(list.body.results[1]).toMatchObject({ memberId: ms[3].id, memberExternalId: ms[3].externalId, title: 'Three', role: 'MEMBER' });
    expect(await count(group.id)).toBe(4);
  });

  it('is atomic: one bad item gives 400 with its pointer and nothing is saved', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(4);
    const items: Record<string, unknown>[] = ms.map((m) => ({ memberId: m.id }));
    items.splice(3, 0, { memberId: MISSING });
    const res = await bulk(group.id, { groupMemberships: items });
    expectProblem(res, 400, '/groupMemberships/3/memberId');
    expect(res.body.errors).toHaveLength(1);
    expect(await count(group.id)).toBe(0);
    expect(await ordered(group.id)).toEqual([]);
  });

  it('names every failing item and field', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(2);
    const res = await bulk(group.id, {
      groupMemberships: [
        { memberId: ms[0].id },
        { memberExternalId: 'nobody', title: 'x'.repeat(257) },
        {},
        { memberId: ms[1].id, role: 'ADMIN' },
        { memberId: ms[1].id, externalId: 'bad id' },
      ],
    });
    // Type-level problems (unknown or read-only fields) are reported before the business rules run.
    expectProblem(res, 400, '/groupMemberships/3/role');
    const rules = await bulk(group.id, {
      groupMemberships: [{ memberId: ms[0].id }, { memberExternalId: 'nobody', title: 'x'.repeat(257) }, {}, { memberId: ms[1].id, externalId: 'bad id' }],
    });
    expectProblem(rules, 400, '/groupMemberships/1/memberExternalId', '/groupMemberships/1/title', '/groupMemberships/2/memberId', '/groupMemberships/3/externalId');
    expect(await count(group.id)).toBe(0);
  });

  it('400 for duplicates within the batch (same member, even by its externalId; same externalId)', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(3);
    const sameMember = await bulk(group.id, { groupMemberships: [{ memberId: ms[0].id }, { memberId: ms[1].id }, { memberExternalId: ms[0].externalId }] });
    expectProblem(sameMember, 400, '/groupMemberships/2/memberExternalId');
    const sameExternal = await bulk(group.id, { groupMemberships: [{ memberId: ms[0].id, externalId: 'x' }, { memberId: ms[1].id, externalId: 'x' }] });
    expectProblem(sameExternal, 400, '/groupMemberships/1/externalId');
    expect(await count(group.id)).toBe(0);
  });

  it('409 with pointers for clashes with existing memberships; nothing saved', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(3);
    await app.http.post(url(group.id)).set(auth()).send({ memberId: ms[0].id, externalId: 'taken' }).expect(201);
    const res = await bulk(group.id, { groupMemberships: [{ memberId: ms[1].id }, { memberId: ms[0].id }, { memberId: ms[2].id, externalId: 'taken' }] });
    expectProblem(res, 409, '/groupMemberships/1/memberId', '/groupMemberships/2/externalId');
    expect(await count(group.id)).toBe(1);
  });

  it('400 for an empty list, a missing or non-array groupMemberships, unknown top-level fields', async () => {
    const group = await createGroup(app, t.communityId);
    const m = await createMember(app, t.communityId);
    expectProblem(await bulk(group.id, { groupMemberships: [] }), 400, '/groupMemberships');
    expectProblem(await bulk(group.id, {}), 400, '/groupMemberships');
    expectProblem(await bulk(group.id, { groupMemberships: { memberId: m.id } }), 400, '/groupMemberships');
    expectProblem(await bulk(group.id, [{ memberId: m.id }]), 400);
    expectProblem(await bulk(group.id, { groupMemberships: [{ memberId: m.id }], members: [] }), 400, '/members');
  });

  it('takes 1000 items in one request, and 400s 1001', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await members(1001);
    expectProblem(await bulk(group.id, { groupMemberships: ms.map((m) => ({ memberId: m.id })) }), 400, '/groupMemberships');
    const res = await bulk(group.id, { groupMemberships: ms.slice(0, 1000).map((m, i) => ({ memberId: m.id, externalId: `x${i}` })) });
    expect(res.status).toBe(201);
    expect(res.body).toHaveLength(1000);
    expect(res.body[999].externalId).toBe('x999');
    expect(await count(group.id)).toBe(1000);
  });

  it('groupsKey=externalId; 404 for a missing or foreign group', async () => {
    const group = await createGroup(app, t.communityId);
    const m = await createMember(app, t.communityId);
    const body = { groupMemberships: [{ memberId: m.id }] };
    expectProblem(await bulk(group.id, body, '?groupsKey=bogus'), 400, '#/query/groupsKey');
    expectProblem(await bulk(MISSING, body), 404);
    expectProblem(await bulk(group.id, body, '', other.key), 404);
    expect((await bulk(group.externalId!, body, '?groupsKey=externalId')).status).toBe(201);
  });
});

describe('PATCH /api/v1/groups/{groupIdentifier}/memberships/order', () => {
  /** A group with n memberships with externalIds o-0..o-(n-1); returns their ids in creation order. */
  async function fixture(n: number) {
    const group = await createGroup(app, t.communityId);
    const ms = await members(n);
    const res = await bulk(group.id, { groupMemberships: ms.map((m, i) => ({ memberId: m.id, externalId: `o-${i}` })) });
    expect(res.status).toBe(201);
    return { group, ids: res.body.map((r: { id: string }) => r.id) as string[] };
  }
  const order = (groupId: string, body: unknown, q = '', key = t.key) => app.http.patch(url(groupId, `/order${q}`)).set(auth(key)).send(body as object);

  it('204 without a body; orderNumber becomes 1..n in the given order', async () => {
    const { group, ids } = await fixture(4);
    const res = await order(group.id, { order: [ids[2], ids[0], ids[3], ids[1]].map((id) => ({ id })) });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await ordered(group.id)).toEqual([
      [ids[2], 1, 'o-2'],
      [ids[0], 2, 'o-0'],
      [ids[3], 3, 'o-3'],
      [ids[1], 4, 'o-1'],
    ]);
  });

  it('matches by externalId when id is absent; a given id wins over externalId', async () => {
    const { group, ids } = await fixture(3);
    const body = { order: [{ externalId: 'o-1' }, { id: ids[2], externalId: 'o-0' }, { id: null, externalId: 'o-0' }] };
    expect((await order(group.externalId!, body, '?groupsKey=externalId')).status).toBe(204);
    expect((await ordered(group.id)).map((r: unknown[]) => r[0])).toEqual([ids[1], ids[2], ids[0]]);
  });

  it('400 with pointers for missing, repeated, unknown and empty elements; nothing changes', async () => {
    const { group, ids } = await fixture(3);
    const foreign = await fixture(1);
    const before = await ordered(group.id);
    const cases: [unknown, string[]][] = [
      [{ order: [{ id: ids[0] }, { id: ids[1] }] }, ['/order']],
      [{ order: [{ id: ids[0] }, { id: ids[1] }, { id: ids[2] }, { id: ids[1] }] }, ['/order/3']],
      [{ order: [{ id: ids[0] }, { id: ids[1] }, { externalId: 'o-0' }] }, ['/order/2', '/order']],
      [{ order: [{ id: ids[0] }, { id: MISSING }, { id: ids[1] }, { id: ids[2] }] }, ['/order/1/id']],
      [{ order: [{ id: foreign.ids[0] }, { id: ids[0] }, { id: ids[1] }, { id: ids[2] }] }, ['/order/0/id']],
      [{ order: [{ id: 'not-an-id' }, { id: ids[0] }, { id: ids[1] }, { id: ids[2] }] }, ['/order/0/id']],
      [{ order: [{ id: ids[0] }, { externalId: 'nope' }, { id: ids[1] }, { id: ids[2] }] }, ['/order/1/externalId']],
      [{ order: [{ id: ids[0] }, {}, { id: ids[1] }, { id: ids[2] }] }, ['/order/1']],
      [{ order: [{ id: ids[0], position: 1 }, { id: ids[1] }, { id: ids[2] }] }, ['/order/0/position']],
      [{ order: [] }, ['/order']],
      [{}, ['/order']],
      [{ order: ids }, ['/order/0']],
    ];
    for (const [body, pointers] of cases) expectProblem(await order(group.id, body), 400, ...pointers);
    expect(await ordered(group.id)).toEqual(before);
  });

  it('an empty group takes an empty order', async () => {
    const group = await createGroup(app, t.communityId);
    expect((await order(group.id, { order: [] })).status).toBe(204);
  });

  it('404 for a missing or foreign group; 400 for bad groupsKey', async () => {
    const { group, ids } = await fixture(1);
    const body = { order: [{ id: ids[0] }] };
    expectProblem(await order(MISSING, body), 404);
    expectProblem(await order(group.id, body, '', other.key), 404);
    expectProblem(await order(group.id, body, '?groupsKey=x'), 400, '#/query/groupsKey');
  });

  it('20 concurrent reorders end as exactly one of the submitted orders (1..n, no mix, gap or duplicate)', async () => {
    const n = 12;
    const { group, ids } = await fixture(n);
    const shuffle = (seed: number) => {
      const out = [...ids];
      for (let i = out.length - 1; i > 0; i--) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31; // seeded: a failure can be replayed
        const j = seed % (i + 1);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    };
    const orders = Array.from({ length: 20 }, (_, i) => shuffle(i + 1));
    expect(new Set(orders.map((o) => o.join())).size).toBe(20);
    const results = await Promise.all(orders.map((o) => order(group.id, { order: o.map((id) => ({ id })) })));
    expect(results.map((r) => r.status)).toEqual(orders.map(() => 204));
    const final = await ordered(group.id);
    expect(final.map((r: unknown[]) => r[1])).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const finalIds = final.map((r: unknown[]) => r[0]).join();
    expect(orders.map((o) => o.join())).toContain(finalIds);
    expect(await count(group.id)).toBe(n);
  });

  it('a reorder that loses a deadlock (opposite lock order, as a member delete takes) is retried: 204', async () => {
    const { group, ids } = await fixture(3);
    const other = new Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    try {
      // Never the victim: PostgreSQL aborts the request's transaction, which waited first.
      await other.query("set deadlock_timeout = '20s'").catch(() => undefined); // superuser only; helps, not needed
      await other.query('begin');
      await other.query('select id from group_memberships where id = $1 for update', [ids[0]]);
      const pending = order(group.id, { order: [ids[2], ids[1], ids[0]].map((id) => ({ id })) }).then((r) => r);
      await new Promise((r) => setTimeout(r, 300)); // the request holds the group, waits for ids[0]
      const closing = other.query('update groups set modified_at = modified_at where id = $1', [group.id]);
      await new Promise((r) => setTimeout(r, 1500)); // its deadlock check (1 s) has fired and rolled it back
      await closing;
      await other.query('commit');
      expect((await pending).status).toBe(204);
    } finally {
      await other.end();
    }
    expect((await ordered(group.id)).map((r: unknown[]) => r[0])).toEqual([ids[2], ids[1], ids[0]]);
  });

  it('concurrent creates and reorders keep orderNumber unique and the count exact', async () => {
    const { group, ids } = await fixture(5);
    const ms = await members(10);
    const creates = ms.map((m) => app.http.post(url(group.id)).set(auth()).send({ memberId: m.id }));
    const reorders = Array.from({ length: 5 }, () => order(group.id, { order: [...ids].reverse().map((id) => ({ id })) }));
    const statuses = (await Promise.all([...creates, ...reorders])).map((r) => r.status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(201));
    for (const s of statuses.slice(10)) expect([204, 400]).toContain(s); // 400 once new memberships are missing from the body
    const numbers = (await ordered(group.id)).map((r: unknown[]) => r[1]);
    expect(new Set(numbers).size).toBe(15);
    expect(await count(group.id)).toBe(15);
  });
});
