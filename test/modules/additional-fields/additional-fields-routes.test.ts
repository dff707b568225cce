import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, FIELDS as URL, memberApi, tick } from '../../helpers/members';

let app: TestApp;
let t: Tenant;
let api: ReturnType<typeof memberApi>;

beforeAll(async () => {
  app = await startTestApp();
  api = memberApi(app);
  t = await app.tenant();
});
afterAll(() => app.close());

const createField = async (body: Record<string, unknown>, tenant = t) => ({ id: await api.createField(tenant, body) });
const getField = (id: string, tenant = t) => api.getField(tenant, id);

describe('GET /api/v1/additional_fields', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await app.tenant();
    for (const [name, orderNumber] of [['one', 3], ['two', 1], ['three', 2]] as const) {
      await createField({ name, orderNumber }, tenant);
      await tick();
    }
  });
  const list = (query: string) => app.http.get(`${URL}${query}`).set(auth(tenant));

  it('lists in creation order by default, with the list envelope', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.results.map((f: { name: string }) => f.name)).toEqual(['one', 'two', 'three']);
    expect(res.body).toMatchObject({ limit: 20, skip: 0, size: 3 });
    expect(res.body._links.self).toMatch(/\/api\/v1\/additional_fields$/);
    expect(res.body._links.next).toBeUndefined();
    expect(res.body.results[0]).toHaveProperty('icon');
  });

  it('pages with limit and skip and links next/prev', async () => {
    const res = await list('?limit=1&skip=1');
    expect(res.body.results.map((f: { name: string }) => f.name)).toEqual(['two']);
    expect(res.body).toMatchObject({ limit: 1, skip: 1, size: 1 });
    expect(res.body._links.next).toBe('/api/v1/additional_fields?limit=1&skip=2');
    expect(res.body._links.prev).toBe('/api/v1/additional_fields?limit=1&skip=0');
  });

  it.each([
    ['orderNumber', ['two', 'three', 'one']],
    ['orderNumber:asc', ['two', 'three', 'one']],
    ['orderNumber:desc', ['one', 'three', 'two']],
    ['createdAt:asc', ['one', 'two', 'three']],
    ['createdAt:desc', ['three', 'two', 'one']],
  ])('sorts by %s', async (sort, names) => {
    const res = await list(`?sort=${sort}`);
    expect(res.body.results.map((f: { name: string }) => f.name)).toEqual(names);
  });

  it('sorts by modifiedAt both ways', async () => {
    const { results } = (await list('')).body;
    await app.http.patch(`${URL}/${results[0].id}`).set(auth(tenant)).send({ name: 'one' + '!' });
    const asc = (await list('?sort=modifiedAt:asc')).body.results.map((f: { name: string }) => f.name);
    const desc = (await list('?sort=modifiedAt:desc')).body.results.map((f: { name: string }) => f.name);
    expect(asc.at(-1)).toBe('one!');
    expect(desc[0]).toBe('one!');
  });

  it.each(['limit=0', 'limit=101', 'limit=x', 'skip=-1', 'skip=1.5', 'sort=name', 'sort=orderNumber:up'])('400 for %s', async (query) => {
    const param = query.split('=')[0];
    expectProblem(await list(`?${query}`), 400, `#/query/${param}`);
  });
});

describe('GET /api/v1/additional_fields/{identifier}', () => {
  it('404 for an unknown id and for a non-UUID id', async () => {
    expectProblem(await app.http.get(`${URL}/00000000-0000-4000-8000-000000000000`).set(auth(t)), 404);
    expectProblem(await app.http.get(`${URL}/not-a-uuid`).set(auth(t)), 404);
  });

  it('is addressed by id only: key=externalId and other key values are 400, key=id is fine', async () => {
    const f = await createField({});
    expectProblem(await app.http.get(`${URL}/${f.id}?key=externalId`).set(auth(t)), 400, '#/query/key');
    expectProblem(await app.http.patch(`${URL}/${f.id}?key=externalId`).set(auth(t)).send({}), 400, '#/query/key');
    expectProblem(await app.http.delete(`${URL}/${f.id}?key=externalId`).set(auth(t)), 400, '#/query/key');
    expectProblem(await app.http.get(`${URL}/${f.id}?key=name`).set(auth(t)), 400, '#/query/key');
    expect((await app.http.get(`${URL}/${f.id}?key=id`).set(auth(t))).status).toBe(200);
  });

  it('answers the same record as GraphQL', async () => {
    const f = await createField({ icon: { style: 'REGULAR', unicode: 'f007' } });
    const rest = await getField(f.id);
    const fields = 'id name placeholder type icon { style unicode } isEditableByMember isMandatoryForMember isVisibleInApp orderNumber createdAt modifiedAt';
    const gql = await app.http.post('/graphql').set(auth(t)).send({
      query: `query($id: ID!) { additionalField(ref: { id: $id }) { ${fields} } additionalFields(limit: 100) { results { ${fields} } } }`,
      variables: { id: f.id },
    });
    expect(gql.body.data.additionalField).toEqual(rest);
    expect(gql.body.data.additionalFields.results).toContainEqual(rest);
  });
});

describe('PATCH /api/v1/additional_fields/{identifier}', () => {
  it('updates the given fields, answers 204 without a body, and moves modifiedAt', async () => {
    const f = await createField({ placeholder: 'old', icon: { style: 'REGULAR', unicode: 'f007' } });
    const before = await getField(f.id);
    await new Promise((r) => setTimeout(r, 5));
    const res = await app.http.patch(`${URL}/${f.id}`).set(auth(t)).send({
      name: 'Mobile', placeholder: null, icon: { style: 'SOLID', unicode: 'f3cd' }, isEditableByMember: false, isMandatoryForMember: true, isVisibleInApp: false,
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = await getField(f.id);
    expect(after).toMatchObject({
      name: 'Mobile', placeholder: null, icon: { style: 'SOLID', unicode: 'f3cd' }, type: 'TEXT',
      isEditableByMember: false, isMandatoryForMember: true, isVisibleInApp: false, orderNumber: before.orderNumber, createdAt: before.createdAt,
    });
    expect(after.modifiedAt > before.modifiedAt).toBe(true);
    expect((await app.http.patch(`${URL}/${f.id}`).set(auth(t)).send({ icon: null })).status).toBe(204);
    expect((await getField(f.id)).icon).toBeNull();
  });

  it('an empty body (or none) is a no-op 204', async () => {
    const f = await createField({});
    const before = await getField(f.id);
    expect((await app.http.patch(`${URL}/${f.id}`).set(auth(t)).send({})).status).toBe(204);
    expect((await app.http.patch(`${URL}/${f.id}`).set(auth(t))).status).toBe(204);
    expect(await getField(f.id)).toEqual(before);
  });

  it('400 for type (it cannot change), read-only and unknown fields, and bad values; nothing changes', async () => {
    const f = await createField({ name: 'Keep' });
    const before = await getField(f.id);
    const patch = (body: object) => app.http.patch(`${URL}/${f.id}`).set(auth(t)).send(body);
    const typeProblem = expectProblem(await patch({ type: 'TEXT', name: 'New' }), 400, '/type');
    expect(typeProblem.errors.map((e) => e.pointer)).toEqual(['/type']);
    expectProblem(await patch({ id: f.id }), 400, '/id');
    expectProblem(await patch({ modifiedAt: before.modifiedAt }), 400, '/modifiedAt');
    expectProblem(await patch({ nickname: 'x' }), 400, '/nickname');
    expectProblem(await patch({ name: null }), 400, '/name');
    expectProblem(await patch({ name: '' }), 400, '/name');
    expectProblem(await patch({ orderNumber: -2 }), 400, '/orderNumber');
    expectProblem(await patch({ icon: { style: 'SOLID', unicode: 'g' } }), 400, '/icon/unicode');
    expectProblem(await patch({ isVisibleInApp: null }), 400, '/isVisibleInApp');
    expect(await getField(f.id)).toEqual(before);
  });

  it('404 for missing and non-UUID ids (even with an empty body)', async () => {
    expectProblem(await app.http.patch(`${URL}/00000000-0000-4000-8000-000000000000`).set(auth(t)).send({ name: 'x' }), 404);
    expectProblem(await app.http.patch(`${URL}/nope`).set(auth(t)).send({}), 404);
  });
});

describe('DELETE /api/v1/additional_fields/{identifier}', () => {
  it('deletes with 204 and no body; then 404', async () => {
    const f = await createField({});
    const res = await app.http.delete(`${URL}/${f.id}`).set(auth(t));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectProblem(await app.http.get(`${URL}/${f.id}`).set(auth(t)), 404);
    expectProblem(await app.http.delete(`${URL}/${f.id}`).set(auth(t)), 404);
    expectProblem(await app.http.delete(`${URL}/not-a-uuid`).set(auth(t)), 404);
  });

  it("removes every member's value for the field, and only those", async () => {
    const gone = await createField({ name: 'gone' });
    const kept = await createField({ name: 'kept' });
    const m = await app.http.post('/api/v1/members').set(auth(t)).send({
      firstName: 'Ada', additionalFields: [{ id: gone.id, value: 'a' }, { id: kept.id, value: 'b' }],
    });
    expect(m.status, JSON.stringify(m.body)).toBe(201);
    expect((await app.http.delete(`${URL}/${gone.id}`).set(auth(t))).status).toBe(204);
    const member = await app.http.get(`/api/v1/members/${m.body.id}`).set(auth(t));
    expect(member.body.additionalFields).toEqual([{ id: kept.id, value: 'b' }]);
  });
});
