import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createGroup, createMembers, deleteMemberRow, expectProblem, keyFor } from '../../helpers/factories';
import type { Group } from '../../../src/modules/groups/group.entity';
import type { Member } from '../../../src/modules/members/member.entity';

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

/** A group with `n` memberships (externalIds gm-0..), all through the API. */
async function fixture(n = 1): Promise<{ group: Group; members: Member[]; ids: string[] }> {
  const group = await createGroup(app, t.communityId);
  const members = await createMembers(app, t.communityId, Array.from({ length: n }, () => ({})));
  if (!n) return { group, members, ids: [] };
  const res = await app.http
    .post(url(group.id, '/_bulk'))
    .set(auth())
    .send({ groupMemberships: members.map((m, i) => ({ memberId: m.id, externalId: `gm-${i}`, title: `T${i}` })) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { group, members, ids: res.body.map((r: { id: string }) => r.id) };
}

const get = (groupId: string, id: string, q = '', key = t.key) => app.http.get(url(groupId, `/${id}${q}`)).set(auth(key));

describe('GET /api/v1/groups/{groupIdentifier}/memberships/{identifier}', () => {
  it('reads by id, by key=externalId, and with groupsKey=externalId too', async () => {
    const { group, members, ids } = await fixture();
    const byId = await get(group.id, ids[0]);
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: ids[0], externalId: 'gm-0', memberId: members[0].id, memberExternalId: members[0].externalId });
    expect((await get(group.id, 'gm-0', '?key=externalId')).body).toEqual(byId.body);
    expect((await get(group.externalId!, 'gm-0', '?key=externalId&groupsKey=externalId')).body).toEqual(byId.body);
    expect((await get(group.externalId!, ids[0], '?groupsKey=externalId&key=id')).body).toEqual(byId.body);
  });

  it('400 for key or groupsKey other than id/externalId', async () => {
    const { group, ids } = await fixture();
    expectProblem(await get(group.id, ids[0], '?key=externalid'), 400, '#/query/key');
    expectProblem(await get(group.id, ids[0], '?groupsKey=ID'), 400, '#/query/groupsKey');
    expectProblem(await get(group.id, ids[0], '?key=a&key=b'), 400, '#/query/key');
  });

  it('404: unknown id, non-id path, id read as externalId, a membership of another group, another community', async () => {
    const { group, ids } = await fixture();
    const second = await fixture();
    expectProblem(await get(group.id, MISSING), 404);
    expectProblem(await get(group.id, 'gm-0'), 404);
    expectProblem(await get(group.id, ids[0], '?key=externalId'), 404);
    expectProblem(await get(group.id, second.ids[0]), 404);
    expectProblem(await get(MISSING, ids[0]), 404);
    expectProblem(await get(group.id, ids[0], '', other.key), 404);
    expectProblem(await get(group.id, 'a%00b', '?key=externalId'), 400, '#/path/identifier'); // NUL: a 400 naming the segment, no 500
    expectProblem(await get('a%00b', 'gm-0', '?key=externalId&groupsKey=externalId'), 400, '#/path/groupIdentifier');
    expectProblem(await get(group.externalId!, 'gm-0', '?key=externalId&groupsKey=externalId', other.key), 404);
  });
});

describe('PATCH /api/v1/groups/{groupIdentifier}/memberships/{identifier}', () => {
  const patch = (groupId: string, id: string, body: unknown, q = '', key = t.key) =>
    app.http.patch(url(groupId, `/${id}${q}`)).set(auth(key)).send(body as object);

  it('changes title and externalId: 204 without a body, modifiedAt moves', async () => {
    const { group, ids } = await fixture();
    const before = (await get(group.id, ids[0])).body;
    await new Promise((r) => setTimeout(r, 3));
    const res = await patch(group.id, ids[0], { title: 'Treasurer', externalId: 'gm-new' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = (await get(group.id, 'gm-new', '?key=externalId')).body;
    expect(after).toMatchObject({ title: 'Treasurer', externalId: 'gm-new', createdAt: before.createdAt, orderNumber: 1 });
    expect(after.modifiedAt > before.modifiedAt).toBe(true);
  });

  it('null clears title and externalId; addressing by key=externalId and groupsKey=externalId', async () => {
    const { group, ids } = await fixture();
    expect((await patch(group.externalId!, 'gm-0', { title: null, externalId: null }, '?key=externalId&groupsKey=externalId')).status).toBe(204);
    expect((await get(group.id, ids[0])).body).toMatchObject({ title: null, externalId: null });
  });

  it('an empty body is a no-op 204 (modifiedAt unchanged)', async () => {
    const { group, ids } = await fixture();
    const before = (await get(group.id, ids[0])).body;
    expect((await patch(group.id, ids[0], {})).status).toBe(204);
    expect((await app.http.patch(url(group.id, `/${ids[0]}`)).set(auth())).status).toBe(204);
    expect((await get(group.id, ids[0])).body).toEqual(before);
  });

  it.each([
    [{ memberId: '3f1d7c1e-0000-4000-8000-000000000000' }, '/memberId'],
    [{ memberExternalId: 'x' }, '/memberExternalId'],
    [{ role: 'ADMIN' }, '/role'],
    [{ orderNumber: 5 }, '/orderNumber'],
    [{ id: 'x' }, '/id'],
    [{ modifiedAt: '2020-01-01T00:00:00.000Z' }, '/modifiedAt'],
    [{ title: 'x'.repeat(257) }, '/title'],
    [{ title: 5 }, '/title'],
    [{ externalId: 'a b' }, '/externalId'],
    [{ externalId: '' }, '/externalId'],
  ])('400 for %j naming %s; nothing changes', async (body, pointer) => {
    const { group, ids } = await fixture();
    const before = (await get(group.id, ids[0])).body;
    expectProblem(await patch(group.id, ids[0], { title: 'changed', ...body }), 400, pointer);
    expect((await get(group.id, ids[0])).body).toEqual(before);
  });

  it('409 when the externalId is taken by another membership of the group', async () => {
    const { group, ids } = await fixture(2);
    expectProblem(await patch(group.id, ids[1], { externalId: 'gm-0' }), 409, '/externalId');
    expect((await patch(group.id, ids[0], { externalId: 'gm-0' })).status).toBe(204); // its own value
  });

  it('404 for a missing membership or group, and for another community', async () => {
    const { group, ids } = await fixture();
    expectProblem(await patch(group.id, MISSING, { title: 'x' }), 404);
    expectProblem(await patch(group.id, MISSING, {}), 404);
    expectProblem(await patch(MISSING, ids[0], { title: 'x' }), 404);
    expectProblem(await patch(group.id, ids[0], { title: 'x' }, '', other.key), 404);
    expectProblem(await patch(group.id, ids[0], { title: 'x' }, '?key=nope'), 400, '#/query/key');
  });
});

describe('DELETE /api/v1/groups/{groupIdentifier}/memberships/{identifier}', () => {
  const del = (groupId: string, id: string, q = '', key = t.key) => app.http.delete(url(groupId, `/${id}${q}`)).set(auth(key));
  const count = async (groupId: string) => (await app.http.get(`/api/v1/groups/${groupId}`).set(auth())).body.membershipCount;

  it('204 without a body; the membership is gone and membershipCount drops', async () => {
    const { group, ids } = await fixture(3);
    expect(await count(group.id)).toBe(3);
    const res = await del(group.id, ids[1]);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await count(group.id)).toBe(2);
    expectProblem(await get(group.id, ids[1]), 404);
    expectProblem(await del(group.id, ids[1]), 404);
  });

  it('by key=externalId and groupsKey=externalId; 400 for a bad key', async () => {
    const { group } = await fixture(2);
    expectProblem(await del(group.id, 'gm-0', '?key=bogus'), 400, '#/query/key');
    expect((await del(group.externalId!, 'gm-0', '?key=externalId&groupsKey=externalId')).status).toBe(204);
    expect(await count(group.id)).toBe(1);
  });

  it("404 for another community's key, nothing deleted", async () => {
    const { group, ids } = await fixture();
    expectProblem(await del(group.id, ids[0], '', other.key), 404);
    expectProblem(await del(MISSING, ids[0]), 404);
    expect(await count(group.id)).toBe(1);
  });
});

describe('membershipCount stays exact', () => {
  it('after a member row is deleted (the database cascades to its memberships)', async () => {
    const { group, members, ids } = await fixture(3);
    const second = await fixture(0);
    await app.http.post(url(second.group.id)).set(auth()).send({ memberId: members[0].id }).expect(201);
    await deleteMemberRow(app, members[0].id);
    const count = async (g: string) => (await app.http.get(`/api/v1/groups/${g}`).set(auth())).body.membershipCount;
    expect(await count(group.id)).toBe(2);
    expect(await count(second.group.id)).toBe(0);
    expectProblem(await get(group.id, ids[0]), 404);
  });
});

/** One call of each of the seven routes (all would succeed with a full key and no query). */
function everyRoute(f: Awaited<ReturnType<typeof fixture>>, key: string, q = '') {
  const { group, members, ids } = f;
  return [
    app.http.get(url(group.id, q)).set(auth(key)),
    app.http.get(url(group.id, `/${ids[0]}${q}`)).set(auth(key)),
    app.http.post(url(group.id, q)).set(auth(key)).send({ memberId: members[1].id }),
    app.http.post(url(group.id, `/_bulk${q}`)).set(auth(key)).send({ groupMemberships: [{ memberId: members[1].id }] }),
    app.http.patch(url(group.id, `/order${q}`)).set(auth(key)).send({ order: [{ id: ids[1] }, { id: ids[0] }] }),
    app.http.patch(url(group.id, `/${ids[0]}${q}`)).set(auth(key)).send({ title: 'x' }),
    app.http.delete(url(group.id, `/${ids[0]}${q}`)).set(auth(key)),
  ];
}

describe('key and groupsKey on every route', () => {
  it.each([
    ['?key=bogus', '#/query/key'],
    ['?groupsKey=bogus', '#/query/groupsKey'],
    ['?groupsKey=externalid', '#/query/groupsKey'],
    ['?key=id&key=externalId', '#/query/key'],
  ])('%s is 400 on all seven routes, nothing changes', async (q, pointer) => {
    const f = await fixture(2);
    for (const res of await Promise.all(everyRoute(f, t.key, q))) expectProblem(res, 400, pointer);
    expect((await get(f.group.id, f.ids[0])).body).toMatchObject({ title: 'T0', orderNumber: 1 });
  });

  it("another community's key gets 404 on all seven routes", async () => {
    const f = await fixture(2);
    for (const res of await Promise.all(everyRoute(f, other.key))) expectProblem(res, 404);
  });
});

describe('scopes', () => {
  it('a groups-only key gets 403 on every membership route; a read key may only read', async () => {
    const f = await fixture(2);
    const { group, ids } = f;
    const groupsOnly = await keyFor(app, t.communityId, ['groups']);
    const readOnly = await keyFor(app, t.communityId, ['group_memberships:read']);
    const calls = (key: string) => everyRoute(f, key);
    for (const res of await Promise.all(calls(groupsOnly))) expectProblem(res, 403);
    const read = await Promise.all(calls(readOnly));
    expect(read.map((r) => r.status)).toEqual([200, 200, 403, 403, 403, 403, 403]);
    expect((await get(group.id, ids[0])).body.title).toBe('T0');
  });
});
