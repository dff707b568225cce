import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/postgresql';
import { GroupMembership } from '../../../src/modules/memberships/membership.entity';
import { createGroup } from '../../helpers/factories';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, MEMBERS as URL, memberApi, NO_ID } from '../../helpers/members';
import { inCommunity } from '../../../src/db/tenancy';

let app: TestApp;
let api: ReturnType<typeof memberApi>;
let t: Tenant;
let other: Tenant;
let phone: string;
let shirt: string;
let seq = 0;
const uniq = (p: string) => `${p}-${++seq}`;

beforeAll(async () => {
  app = await startTestApp();
  api = memberApi(app);
  t = await app.tenant();
  other = await app.tenant();
  shirt = await api.createField(t, { name: 'Shirt', orderNumber: 1 });
  phone = await api.createField(t, { name: 'Phone', orderNumber: 2 });
});
afterAll(() => app.close());

const createMember = (body: Record<string, unknown>, tenant = t) => api.createMember(tenant, body);
const getMember = (id: string, tenant = t, query = '') => api.getMember(tenant, id, query);

describe('PATCH /api/v1/members/{identifier}', () => {
  const patch = (id: string, body: unknown, query = '') => app.http.patch(`${URL}/${id}${query}`).set(auth(t)).send(body as object);

  it('updates the given fields, answers 204 without a body, and moves modifiedAt', async () => {
    const m = await createMember({ firstName: 'Old', lastName: 'Name', emailAddress: uniq('old') + '@example.com' });
    const before = await getMember(m.id);
    await new Promise((r) => setTimeout(r, 5));
    const res = await patch(m.id, { firstName: 'New', emailAddress: null, externalId: uniq('set') });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await getMember(m.id);
    expect(after).toMatchObject({ firstName: 'New', lastName: 'Name', emailAddress: null, createdAt: before.createdAt });
    expect(after.modifiedAt > before.modifiedAt).toBe(true);
  });

  it('additionalFields: listed values are set, null removes one, unlisted values stay', async () => {
    const m = await createMember({ firstName: 'V', additionalFields: [{ id: phone, value: 'p1' }] });
    expect((await patch(m.id, { additionalFields: [{ id: shirt, value: 'L' }] })).status).toBe(204);
    expect((await getMember(m.id)).additionalFields).toEqual([{ id: shirt, value: 'L' }, { id: phone, value: 'p1' }]);
    expect((await patch(m.id, { additionalFields: [{ id: shirt, value: 'XL' }, { id: phone, value: null }] })).status).toBe(204);
    expect((await getMember(m.id)).additionalFields).toEqual([{ id: shirt, value: 'XL' }]);
    expect((await patch(m.id, { additionalFields: [{ id: phone, value: null }] })).status).toBe(204); // already absent
    expect((await getMember(m.id)).additionalFields).toEqual([{ id: shirt, value: 'XL' }]);
  });

  it('a changed value moves modifiedAt; writing the same values changes nothing', async () => {
    const m = await createMember({ firstName: 'S', additionalFields: [{ id: phone, value: 'same' }] });
    const before = await getMember(m.id);
    await new Promise((r) => setTimeout(r, 5));
    await patch(m.id, { firstName: 'S', additionalFields: [{ id: phone, value: 'same' }] });
    expect(await getMember(m.id)).toEqual(before);
    await patch(m.id, { additionalFields: [{ id: phone, value: 'other' }] });
    expect((await getMember(m.id)).modifiedAt > before.modifiedAt).toBe(true);
  });

  it('an empty body (or none) is a no-op 204', async () => {
    const m = await createMember({ firstName: 'E' });
    const before = await getMember(m.id);
    expect((await patch(m.id, {})).status).toBe(204);
    expect((await app.http.patch(`${URL}/${m.id}`).set(auth(t))).status).toBe(204);
    expect(await getMember(m.id)).toEqual(before);
  });

  it('patches by key=externalId and can change the externalId', async () => {
    const ext = uniq('pk');
    const m = await createMember({ externalId: ext });
    expect((await patch(ext, { externalId: `${ext}-new`, lastName: 'K' }, '?key=externalId')).status).toBe(204);
    expect(await getMember(m.id)).toMatchObject({ externalId: `${ext}-new`, lastName: 'K' });
    expectProblem(await patch(ext, { lastName: 'x' }, '?key=externalId'), 404);
  });

  it('400 for bad values, read-only and unknown fields, unknown additional fields; nothing changes', async () => {
    const m = await createMember({ firstName: 'Keep', additionalFields: [{ id: phone, value: 'k' }] });
    const before = await getMember(m.id);
    expectProblem(await patch(m.id, { emailAddress: 'bad' }), 400, '/emailAddress');
    expectProblem(await patch(m.id, { firstName: '' }), 400, '/firstName');
    expectProblem(await patch(m.id, { externalId: 'bad id' }), 400, '/externalId');
    expectProblem(await patch(m.id, { id: NO_ID }), 400, '/id');
    expectProblem(await patch(m.id, { createdAt: before.createdAt }), 400, '/createdAt');
    expectProblem(await patch(m.id, { additionalFields: null }), 400, '/additionalFields');
    expectProblem(await patch(m.id, { firstName: 'Changed', additionalFields: [{ id: NO_ID, value: 'x' }] }), 400, '/additionalFields/0/id');
    // The id is quoted, so an empty one still reads as one ('" is not an additional field' was all it said).
    const empty = await patch(m.id, { additionalFields: [{ id: '', value: 'x' }] });
    expectProblem(empty, 400, '/additionalFields/0/id');
    expect(empty.body.errors[0].detail).toBe('"" is not an additional field of this community');
    const twice = await patch(m.id, { additionalFields: [{ id: shirt, value: 'a' }, { id: shirt, value: null }] });
    expectProblem(twice, 400, '/additionalFields/1/id');
    expect(twice.body.errors[0].detail).toBe(`additional field "${shirt}" is already given at /additionalFields/0`);
    expectProblem(await patch(m.id, { additionalFields: [{ id: shirt, value: 'x'.repeat(2049) }] }), 400, '/additionalFields/0/value');
    expectProblem(await patch(m.id, { firstName: null }), 400, '/'); // it would leave no identifying field
    expect(await getMember(m.id)).toEqual(before);
  });

  it('409 when the new externalId or email is taken; 404 for missing and non-UUID ids', async () => {
    const a = await createMember({ externalId: uniq('a'), emailAddress: uniq('a') + '@example.com' });
    const b = await createMember({ firstName: 'B' });
    const aGot = await getMember(a.id);
    expectProblem(await patch(b.id, { externalId: a.externalId }), 409, '/externalId');
    expectProblem(await patch(b.id, { emailAddress: aGot.emailAddress.toUpperCase() }), 409, '/emailAddress');
    expect((await getMember(b.id)).externalId).toBeNull();
    expectProblem(await patch(NO_ID, { firstName: 'x' }), 404);
    expectProblem(await patch('nope', {}), 404);
  });
});

describe('DELETE /api/v1/members/{identifier}', () => {
  it('deletes by id and by key=externalId with 204 and no body; then 404', async () => {
    const a = await createMember({ firstName: 'A', additionalFields: [{ id: phone, value: 'x' }] });
    const res = await app.http.delete(`${URL}/${a.id}`).set(auth(t));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectProblem(await app.http.get(`${URL}/${a.id}`).set(auth(t)), 404);
    expectProblem(await app.http.delete(`${URL}/${a.id}`).set(auth(t)), 404);
    const ext = uniq('del');
    await createMember({ externalId: ext });
    expect((await app.http.delete(`${URL}/${ext}?key=externalId`).set(auth(t))).status).toBe(204);
    expectProblem(await app.http.get(`${URL}/${ext}?key=externalId`).set(auth(t)), 404);
    expectProblem(await app.http.delete(`${URL}/not-a-uuid`).set(auth(t)), 404);
  });

  it('deletes the member\'s memberships, and the group\'s membershipCount follows', async () => {
    const m = await createMember({ firstName: 'In a group' });
    const group = await createGroup(app, t.communityId);
    const em = app.runtime.orm.em.fork() as unknown as EntityManager;
    em.create(GroupMembership, { communityId: t.communityId, groupId: group.id, memberId: m.id, orderNumber: 1 });
    await inCommunity(t.communityId, () => em.flush());
    expect((await app.http.get(`/api/v1/groups/${group.id}`).set(auth(t))).body.membershipCount).toBe(1);
    expect((await app.http.delete(`${URL}/${m.id}`).set(auth(t))).status).toBe(204);
    expect(await inCommunity(t.communityId, () => em.fork().count(GroupMembership, { memberId: m.id }))).toBe(0);
    expect((await app.http.get(`/api/v1/groups/${group.id}`).set(auth(t))).body.membershipCount).toBe(0);
  });
});

describe('tenancy and scopes', () => {
  it('another community gets 404 on every id-addressed route and never sees the member', async () => {
    const ext = uniq('private');
    const m = await createMember({ externalId: ext, firstName: 'Private' });
    for (const path of [`${URL}/${m.id}`, `${URL}/${ext}?key=externalId`]) {
      expectProblem(await app.http.get(path).set(auth(other)), 404);
      expectProblem(await app.http.patch(path).set(auth(other)).send({ firstName: 'Stolen' }), 404);
      expectProblem(await app.http.delete(path).set(auth(other)), 404);
    }
    const list = await app.http.get(`${URL}?limit=100`).set(auth(other));
    expect(list.body.results.map((x: { id: string }) => x.id)).not.toContain(m.id);
    const gqlList = await app.http.post('/graphql').set(auth(other)).send({ query: '{ members(limit: 100) { results { id } } }' });
    expect(gqlList.body.data.members.results.map((x: { id: string }) => x.id)).not.toContain(m.id);
    const gqlOne = await app.http.post('/graphql').set(auth(other)).send({ query: `{ member(ref: { id: "${m.id}" }) { id } }` });
    expect(gqlOne.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await getMember(m.id)).firstName).toBe('Private');
  });

  it('403 for a key without the members scope; members:read may GET but not write', async () => {
    const m = await createMember({ firstName: 'Scoped' });
    const groupsOnly = await app.tenant({ scopes: ['groups'] });
    const readOnly = await app.tenant({ scopes: ['members:read'] });
    const routes = (key: Tenant) => [
      app.http.get(URL).set(auth(key)),
      app.http.post(URL).set(auth(key)).send({ firstName: 'x' }),
      app.http.post(`${URL}/_bulk`).set(auth(key)).send({ members: [{ firstName: 'x' }] }),
      app.http.get(`${URL}/${m.id}`).set(auth(key)),
      app.http.patch(`${URL}/${m.id}`).set(auth(key)).send({ firstName: 'y' }),
      app.http.delete(`${URL}/${m.id}`).set(auth(key)),
    ];
    for (const res of await Promise.all(routes(groupsOnly))) expectProblem(res, 403);
    const [list, post, postBulk, get, patch, del] = await Promise.all(routes(readOnly));
    expect(list.status).toBe(200);
    expect(get.status).toBe(404); // another community: readable scope, but not its record
    for (const res of [post, postBulk, patch, del]) expectProblem(res, 403);
    expectProblem(await app.http.get(URL), 401);
  });
});
