import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createGroup, createMember, createMembers, expectProblem } from '../../helpers/factories';
import type { Group } from '../../../src/modules/groups/group.entity';
import type { Member } from '../../../src/modules/members/member.entity';

let app: TestApp;
let t: Tenant;
let other: Tenant;
const auth = (key = t.key) => ({ 'X-API-Key': key });
const url = (groupIdentifier: string, rest = '') => `/api/v1/groups/${groupIdentifier}/memberships${rest}`;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  other = await app.tenant();
});
afterAll(() => app.close());

async function add(groupId: string, body: Record<string, unknown>, key = t.key) {
  const res = await app.http.post(url(groupId)).set(auth(key)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; externalId: string | null };
}

async function membershipCount(groupId: string): Promise<number> {
  const res = await app.http.get(`/api/v1/groups/${groupId}`).set(auth());
  return res.body.membershipCount;
}

async function freshGroup(members = 0): Promise<{ group: Group; members: Member[] }> {
  return {
    group: await createGroup(app, t.communityId),
    members: members ? await createMembers(app, t.communityId, Array.from({ length: members }, () => ({}))) : [],
  };
}

describe('POST /api/v1/groups/{groupIdentifier}/memberships', () => {
  it('creates a membership: 201 ApiInsertResponse, role MEMBER, orderNumber 1, count 1', async () => {
    const { group, members } = await freshGroup(1);
    const res = await app.http.post(url(group.id)).set(auth()).send({ memberId: members[0].id, externalId: 'gm-1', title: 'Chair' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), externalId: 'gm-1' });
    const got = await app.http.get(url(group.id, `/${res.body.id}`)).set(auth());
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: res.body.id,
      externalId: 'gm-1',
      memberId: members[0].id,
      memberExternalId: members[0].externalId,
      title: 'Chair',
      orderNumber: 1,
      role: 'MEMBER',
      createdAt: expect.stringMatching(TIMESTAMP),
      modifiedAt: expect.stringMatching(TIMESTAMP),
    });
    expect(await membershipCount(group.id)).toBe(1);
  });

  it('accepts memberExternalId alone, or both when they name the same member; externalId defaults to null', async () => {
    const { group, members } = await freshGroup(2);
    const a = await add(group.id, { memberExternalId: members[0].externalId });
    const b = await add(group.id, { memberId: members[1].id, memberExternalId: members[1].externalId });
    expect(a.externalId).toBeNull();
    const got = await app.http.get(url(group.id, `/${b.id}`)).set(auth());
    expect(got.body).toMatchObject({ memberId: members[1].id, orderNumber: 2, title: null });
  });

  it('numbers new memberships current maximum + 1 (a deleted last one leaves no hole to refill)', async () => {
    const { group, members } = await freshGroup(4);
    const made = [];
    for (const m of members.slice(0, 3)) made.push(await add(group.id, { memberId: m.id }));
    await app.http.delete(url(group.id, `/${made[1].id}`)).set(auth()).expect(204);
    const last = await add(group.id, { memberId: members[3].id });
    expect((await app.http.get(url(group.id, `/${last.id}`)).set(auth())).body.orderNumber).toBe(4);
  });

  it.each([
    [{ memberId: undefined }, '/memberId'], // an empty body
    [{ memberId: null }, '/memberId'],
    [{ memberId: '3f1d7c1e-0000-4000-8000-000000000000' }, '/memberId'],
    [{ memberId: 'not-an-id' }, '/memberId'],
    [{ memberId: 42 }, '/memberId'],
    [{ memberExternalId: 'nobody' }, '/memberExternalId'],
    [{ memberExternalId: 'nul\u0000' }, '/memberExternalId'],
    [{ title: 'nul\u0000' }, '/title'],
    [{ externalId: 'has space' }, '/externalId'],
    [{ externalId: '' }, '/externalId'],
    [{ externalId: 'x'.repeat(129) }, '/externalId'],
    [{ title: 'x'.repeat(257) }, '/title'],
    [{ role: 'ADMIN' }, '/role'],
    [{ role: 'MEMBER' }, '/role'],
    [{ orderNumber: 1 }, '/orderNumber'],
    [{ id: 'abc' }, '/id'],
    [{ createdAt: '2020-01-01T00:00:00.000Z' }, '/createdAt'],
    [{ unknown: 1 }, '/unknown'],
  ])('400 for %j naming %s, nothing saved', async (body, pointer) => {
    const { group, members } = await freshGroup(1);
    const res = await app.http.post(url(group.id)).set(auth()).send({ memberId: members[0].id, ...body });
    expectProblem(res, 400, pointer);
    expect(await membershipCount(group.id)).toBe(0);
  });

  it('400 on both member fields when memberId and memberExternalId name different members', async () => {
    const { group, members } = await freshGroup(2);
    const res = await app.http.post(url(group.id)).set(auth()).send({ memberId: members[0].id, memberExternalId: members[1].externalId });
    expectProblem(res, 400, '/memberId', '/memberExternalId');
  });

  it("400 for a member of another community (it does not exist for the caller)", async () => {
    const { group } = await freshGroup();
    const foreign = await createMember(app, other.communityId);
    expectProblem(await app.http.post(url(group.id)).set(auth()).send({ memberId: foreign.id }), 400, '/memberId');
    expectProblem(await app.http.post(url(group.id)).set(auth()).send({ memberExternalId: foreign.externalId }), 400, '/memberExternalId');
  });

  it('400 for a body that is not a JSON object', async () => {
    const { group } = await freshGroup();
    expectProblem(await app.http.post(url(group.id)).set(auth()).send([1]), 400);
    expectProblem(await app.http.post(url(group.id)).set(auth()).set('Content-Type', 'text/plain').send('x'), 400);
    expectProblem(await app.http.post(url(group.id)).set(auth()).set('Content-Type', 'application/json').send('{bad'), 400);
  });

  it('409 when the member is already in the group (pointer /memberId) or the externalId is taken in the group', async () => {
    const { group, members } = await freshGroup(2);
    await add(group.id, { memberId: members[0].id, externalId: 'dup' });
    expectProblem(await app.http.post(url(group.id)).set(auth()).send({ memberId: members[0].id }), 409, '/memberId');
    expectProblem(await app.http.post(url(group.id)).set(auth()).send({ memberId: members[1].id, externalId: 'dup' }), 409, '/externalId');
    expect(await membershipCount(group.id)).toBe(1);
    const elsewhere = await createGroup(app, t.communityId);
    await add(elsewhere.id, { memberId: members[0].id, externalId: 'dup' }); // unique within its group only
  });

  it('groupsKey=externalId reads the path as the group externalId; other values are 400', async () => {
    const { group, members } = await freshGroup(1);
    const res = await app.http.post(url(group.externalId!, '?groupsKey=externalId')).set(auth()).send({ memberId: members[0].id });
    expect(res.status).toBe(201);
    expectProblem(await app.http.post(url(group.id, '?groupsKey=name')).set(auth()).send({ memberId: members[0].id }), 400, '#/query/groupsKey');
    expectProblem(await app.http.post(url(group.id, '?groupsKey=externalId')).set(auth()).send({ memberId: members[0].id }), 404);
  });

  it('404 for a missing group, a non-id path and another community\'s group', async () => {
    const { group, members } = await freshGroup(1);
    const body = { memberId: members[0].id };
    expectProblem(await app.http.post(url('3f1d7c1e-0000-4000-8000-000000000000')).set(auth()).send(body), 404);
    expectProblem(await app.http.post(url('nope')).set(auth()).send(body), 404);
    expectProblem(await app.http.post(url(group.id)).set(auth(other.key)).send(body), 404);
  });
});

describe('GET /api/v1/groups/{groupIdentifier}/memberships', () => {
  let group: Group;
  const ids: Record<'A' | 'B' | 'C', string> = { A: '', B: '', C: '' };

  // createdAt: A < B < C; orderNumber after reorder: B, C, A; modifiedAt after patches: C < A < B.
  beforeAll(async () => {
    const fixture = await freshGroup(3);
    group = fixture.group;
    for (const [i, name] of (['A', 'B', 'C'] as const).entries()) {
      ids[name] = (await add(group.id, { memberId: fixture.members[i].id, externalId: `m-${name}` })).id;
      await sleep(3);
    }
    await app.http.patch(url(group.id, '/order')).set(auth()).send({ order: [{ id: ids.B }, { id: ids.C }, { id: ids.A }] }).expect(204);
    for (const name of ['C', 'A', 'B'] as const) {
      await sleep(3);
      await app.http.patch(url(group.id, `/${ids[name]}`)).set(auth()).send({ title: `t-${name}` }).expect(204);
    }
  });

  const names = (body: { results: { id: string }[] }) =>
    body.results.map((r) => Object.entries(ids).find(([, id]) => id === r.id)?.[0]).join('');

  it('lists by createdAt ascending by default, with the list envelope', async () => {
    const res = await app.http.get(url(group.id)).set(auth());
    expect(res.status).toBe(200);
    expect(names(res.body)).toBe('ABC');
    expect(res.body).toMatchObject({ limit: 20, skip: 0, size: 3 });
    expect(res.body._links).toEqual({ base: expect.any(String), self: expect.stringContaining(url(group.id)) });
    expect(res.body.results[0]).toMatchObject({ externalId: 'm-A', role: 'MEMBER', orderNumber: 3, title: 't-A' });
  });

  it.each([
    ['createdAt:asc', 'ABC'],
    ['createdAt:desc', 'CBA'],
    ['orderNumber', 'BCA'],
    ['orderNumber:asc', 'BCA'],
    ['orderNumber:desc', 'ACB'],
    ['modifiedAt:asc', 'CAB'],
    ['modifiedAt:desc', 'BAC'],
    ['orderNumber:desc,createdAt:asc', 'ACB'],
    ['createdAt:desc,orderNumber', 'CBA'],
  ])('sort=%s gives %s', async (sort, expected) => {
    const res = await app.http.get(url(group.id, `?sort=${sort}`)).set(auth());
    expect(res.status).toBe(200);
    expect(names(res.body)).toBe(expected);
  });

  it.each(['title', 'name:asc', 'orderNumber:up', 'orderNumber:asc:x'])('400 for sort=%s', async (sort) => {
    expectProblem(await app.http.get(url(group.id, `?sort=${sort}`)).set(auth()), 400, '#/query/sort');
  });

  it.each([
    ['limit=0', '#/query/limit'],
    ['limit=101', '#/query/limit'],
    ['limit=-1', '#/query/limit'],
    ['limit=abc', '#/query/limit'],
    ['limit=1.5', '#/query/limit'],
    ['skip=-1', '#/query/skip'],
    ['skip=x', '#/query/skip'],
  ])('400 for %s', async (query, pointer) => {
    expectProblem(await app.http.get(url(group.id, `?${query}`)).set(auth()), 400, pointer);
  });

  it('pages with limit/skip and relative next/prev links that keep sort and groupsKey (never api_key)', async () => {
    const first = await app.http.get(url(group.externalId!, `?groupsKey=externalId&sort=orderNumber&limit=1&api_key=${t.key}`));
    expect(first.status).toBe(200);
    expect(names(first.body)).toBe('B');
    expect(first.body._links.prev).toBeUndefined();
    const next = first.body._links.next as string;
    expect(next).toMatch(/^\/api\/v1\/groups\//);
    expect(next).toContain('groupsKey=externalId');
    expect(next).toContain('sort=orderNumber');
    expect(next).not.toContain('api_key');
    expect(first.body._links.self).not.toContain('api_key');
    const second = await app.http.get(next).set(auth());
    expect(names(second.body)).toBe('C');
    expect(second.body).toMatchObject({ limit: 1, skip: 1, size: 1 });
    expect(second.body._links.prev).toContain('skip=0');
    const last = await app.http.get(second.body._links.next).set(auth());
    expect(names(last.body)).toBe('A');
    expect(last.body._links.next).toBeUndefined();
    const beyond = await app.http.get(url(group.id, '?skip=10&limit=100')).set(auth());
    expect(beyond.body).toMatchObject({ results: [], size: 0, skip: 10, limit: 100 });
  });

  it('key is not used on the collection but must still be id or externalId', async () => {
    expect((await app.http.get(url(group.id, '?key=externalId')).set(auth())).status).toBe(200);
    expectProblem(await app.http.get(url(group.id, '?key=name')).set(auth()), 400, '#/query/key');
    expectProblem(await app.http.get(url(group.id, '?groupsKey=nope')).set(auth()), 400, '#/query/groupsKey');
  });

  it('404 for a missing or foreign group; lists never leak another community\'s memberships', async () => {
    expectProblem(await app.http.get(url('3f1d7c1e-0000-4000-8000-000000000000')).set(auth()), 404);
    expectProblem(await app.http.get(url(group.id)).set(auth(other.key)), 404);
    expectProblem(await app.http.get(url(group.externalId!, '?groupsKey=externalId')).set(auth(other.key)), 404);
    const theirs = await createGroup(app, other.communityId, { externalId: group.externalId });
    const res = await app.http.get(url(group.externalId!, '?groupsKey=externalId')).set(auth(other.key));
    expect(res.body).toMatchObject({ results: [], size: 0 });
    expect(theirs.id).not.toBe(group.id);
  });

  it('a page past the end of an existing group is 200 with no results, not 404 (the group is looked up in the page\'s statement)', async () => {
    const res = await app.http.get(url(group.id, '?skip=50&limit=5')).set(auth()).expect(200);
    expect(res.body).toMatchObject({ results: [], size: 0, skip: 50, limit: 5 });
    const byExt = await app.http.get(url(group.externalId!, '?groupsKey=externalId&skip=3')).set(auth()).expect(200);
    expect(byExt.body).toMatchObject({ results: [], size: 0 });
    expect((await app.http.get(url(group.externalId!, '?groupsKey=externalId&skip=2')).set(auth()).expect(200)).body.size).toBe(1);
  });
});
