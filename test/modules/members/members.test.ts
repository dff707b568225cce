import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, MEMBERS as URL, memberApi, NO_ID, tick, TS } from '../../helpers/members';

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
const count = (tenant: Tenant) => api.countMembers(tenant);

describe('POST /api/v1/members', () => {
  it('creates a member, answers ApiInsertResponse, and GET shows every field', async () => {
    const res = await app.http.post(URL).set(auth(t)).send({
      externalId: 'mem-1', firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'Ada@Example.org',
      additionalFields: [{ id: phone, value: '+44 1' }, { id: shirt, value: 'M' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), externalId: 'mem-1' });
    const got = await getMember(res.body.id);
    expect(got).toEqual({
      id: res.body.id, externalId: 'mem-1', firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'Ada@Example.org',
      // ordered like the fields: Shirt has orderNumber 1, Phone 2
      additionalFields: [{ id: shirt, value: 'M' }, { id: phone, value: '+44 1' }],
      createdAt: expect.stringMatching(TS), modifiedAt: expect.stringMatching(TS),
    });
    expect(got.modifiedAt).toBe(got.createdAt);
  });

  it.each([{ firstName: 'Solo' }, { lastName: 'Solo' }, { emailAddress: 'solo@example.com' }, { externalId: 'solo' }])(
    'one identifying field is enough: %j',
    async (body) => {
      const created = await createMember(body);
      expect(created.externalId).toBe(body.externalId ?? null);
      expect(await getMember(created.id)).toMatchObject({ firstName: null, lastName: null, emailAddress: null, externalId: null, additionalFields: [], ...body });
    },
  );

  it('400 for a member without externalId, firstName, lastName and emailAddress', async () => {
    expectProblem(await app.http.post(URL).set(auth(t)).send({}), 400, '/');
    expectProblem(await app.http.post(URL).set(auth(t)).send({ firstName: null, additionalFields: [{ id: phone, value: 'x' }] }), 400, '/');
  });

  it('a null value in additionalFields stores nothing', async () => {
    const created = await createMember({ firstName: 'N', additionalFields: [{ id: phone, value: null }] });
    expect((await getMember(created.id)).additionalFields).toEqual([]);
  });

  it.each([
    [{ externalId: 'has space' }, '/externalId'],
    [{ externalId: 'x'.repeat(129) }, '/externalId'],
    [{ externalId: '' }, '/externalId'],
    [{ firstName: '' }, '/firstName'],
    [{ firstName: 'x'.repeat(257) }, '/firstName'],
    [{ lastName: 'x'.repeat(257) }, '/lastName'],
    [{ lastName: 3 }, '/lastName'],
    [{ emailAddress: 'plain' }, '/emailAddress'],
    [{ emailAddress: 'a@b' }, '/emailAddress'],
    [{ emailAddress: 'a b@example.com' }, '/emailAddress'],
    [{ emailAddress: '@example.com' }, '/emailAddress'],
    [{ emailAddress: 'a@@example.com' }, '/emailAddress'],
    [{ emailAddress: `${'a'.repeat(250)}@example.com` }, '/emailAddress'],
    [{ additionalFields: { id: 'x' } }, '/additionalFields'],
    [{ additionalFields: null }, '/additionalFields'],
    [{ additionalFields: [{ value: 'x' }] }, '/additionalFields/0/id'],
    [{ additionalFields: [{ id: NO_ID, value: 'x' }] }, '/additionalFields/0/id'],
    [{ additionalFields: [{ id: 'not-a-uuid', value: 'x' }] }, '/additionalFields/0/id'],
    [{ additionalFields: [{ id: 'PHONE', value: 5 }] }, '/additionalFields/0/value'],
    [{ additionalFields: [{ id: 'PHONE', value: 'x'.repeat(2049) }] }, '/additionalFields/0/value'],
    [{ additionalFields: [{ id: 'PHONE', value: 'a' }, { id: 'PHONE', value: 'b' }] }, '/additionalFields/1/id'],
    [{ additionalFields: [{ id: 'PHONE', value: 'a', label: 'x' }] }, '/additionalFields/0/label'],
    [{ id: NO_ID }, '/id'],
    [{ createdAt: '2026-01-01T00:00:00.000Z' }, '/createdAt'],
    [{ modifiedAt: '2026-01-01T00:00:00.000Z' }, '/modifiedAt'],
    [{ nickname: 'x' }, '/nickname'],
  ])('400 for %j naming %s; nothing is saved', async (patch, pointer) => {
    const before = await count(t);
    const body = JSON.parse(JSON.stringify({ firstName: 'Val', ...patch }).replaceAll('"PHONE"', JSON.stringify(phone)));
    expectProblem(await app.http.post(URL).set(auth(t)).send(body), 400, pointer);
    expect(await count(t)).toBe(before);
  });

  it("400 for another community's additional field id", async () => {
    const foreign = (await app.http.post('/api/v1/additional_fields').set(auth(other)).send({ name: 'F', type: 'TEXT' })).body.id;
    expectProblem(await app.http.post(URL).set(auth(t)).send({ firstName: 'x', additionalFields: [{ id: foreign, value: 'v' }] }), 400, '/additionalFields/0/id');
  });

  it('accepts a value of exactly 2048 characters and an empty value', async () => {
    const created = await createMember({ firstName: 'Long', additionalFields: [{ id: phone, value: 'x'.repeat(2048) }, { id: shirt, value: '' }] });
    expect((await getMember(created.id)).additionalFields).toEqual([{ id: shirt, value: '' }, { id: phone, value: 'x'.repeat(2048) }]);
  });

  it('409 naming the field for a taken externalId or email (case-insensitive), not across communities', async () => {
    await createMember({ externalId: 'taken-1', emailAddress: 'taken@example.com' });
    const ext = expectProblem(await app.http.post(URL).set(auth(t)).send({ externalId: 'taken-1' }), 409, '/externalId');
    expect(ext.detail).toMatch(/externalId/);
    const mail = expectProblem(await app.http.post(URL).set(auth(t)).send({ emailAddress: 'TAKEN@example.COM' }), 409, '/emailAddress');
    expect(mail.detail).toMatch(/emailAddress/);
    await createMember({ externalId: 'taken-1', emailAddress: 'taken@example.com' }, other);
  });
});

describe('GET /api/v1/members', () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await app.tenant();
    for (const [firstName, lastName] of [['Cleo', 'Adams'], ['Abe', 'Cole'], ['Bea', 'Baker']]) {
      await createMember({ firstName, lastName }, tenant);
      await tick();
    }
  });
  const names = async (query: string) =>
    (await app.http.get(`${URL}${query}`).set(auth(tenant))).body.results.map((m: { firstName: string }) => m.firstName);

  it('lists in creation order by default, with the list envelope', async () => {
    const res = await app.http.get(URL).set(auth(tenant));
    expect(res.status).toBe(200);
    expect(res.body.results.map((m: { firstName: string }) => m.firstName)).toEqual(['Cleo', 'Abe', 'Bea']);
    expect(res.body).toMatchObject({ limit: 20, skip: 0, size: 3 });
    expect(res.body._links).toMatchObject({ self: expect.stringMatching(/\/api\/v1\/members$/), base: expect.any(String) });
    expect(res.body.results[0].additionalFields).toEqual([]);
  });

  it('pages with limit and skip', async () => {
    const res = await app.http.get(`${URL}?limit=1&skip=1&sort=firstName`).set(auth(tenant));
    expect(res.body.results.map((m: { firstName: string }) => m.firstName)).toEqual(['Bea']);
    expect(res.body._links.next).toBe('/api/v1/members?limit=1&skip=2&sort=firstName');
    expect(res.body._links.prev).toBe('/api/v1/members?limit=1&skip=0&sort=firstName');
  });

  it.each([
    ['firstName', ['Abe', 'Bea', 'Cleo']],
    ['firstName:desc', ['Cleo', 'Bea', 'Abe']],
    ['lastName:asc', ['Cleo', 'Bea', 'Abe']],
    ['lastName:desc', ['Abe', 'Bea', 'Cleo']],
    ['createdAt:asc', ['Cleo', 'Abe', 'Bea']],
    ['createdAt:desc', ['Bea', 'Abe', 'Cleo']],
    ['modifiedAt:asc', ['Cleo', 'Abe', 'Bea']],
    ['modifiedAt:desc', ['Bea', 'Abe', 'Cleo']],
  ])('sorts by %s', async (sort, expected) => {
    expect(await names(`?sort=${sort}`)).toEqual(expected);
  });

  it.each(['limit=0', 'limit=101', 'limit=ten', 'skip=-1', 'sort=emailAddress', 'sort=firstName:sideways'])('400 for %s', async (query) => {
    expectProblem(await app.http.get(`${URL}?${query}`).set(auth(tenant)), 400, `#/query/${query.split('=')[0]}`);
  });
});

describe('GET /api/v1/members/{identifier}', () => {
  it('reads by id and by key=externalId; key=id is the default', async () => {
    const m = await createMember({ externalId: uniq('read'), firstName: 'R' });
    const byId = await getMember(m.id);
    expect(await getMember(m.externalId!, t, '?key=externalId')).toEqual(byId);
    expect(await getMember(m.id, t, '?key=id')).toEqual(byId);
  });

  it('404 for unknown ids, non-UUID ids and unknown externalIds; 400 for another key value', async () => {
    expectProblem(await app.http.get(`${URL}/${NO_ID}`).set(auth(t)), 404);
    expectProblem(await app.http.get(`${URL}/not-a-uuid`).set(auth(t)), 404);
    expectProblem(await app.http.get(`${URL}/nobody?key=externalId`).set(auth(t)), 404);
    expectProblem(await app.http.get(`${URL}/${NO_ID}?key=email`).set(auth(t)), 400, '#/query/key');
  });

  it('answers the same record as GraphQL (member and members)', async () => {
    const m = await createMember({ externalId: uniq('gql'), firstName: 'G', additionalFields: [{ id: phone, value: '1' }] });
    const rest = await getMember(m.id);
    const fields = 'id externalId firstName lastName emailAddress additionalFields { id value } createdAt modifiedAt';
    const gql = await app.http.post('/graphql').set(auth(t)).send({
      query: `query($ext: String!) { member(ref: { externalId: $ext }) { ${fields} } members(limit: 100, sort: [{ field: createdAt, direction: DESC }]) { results { ${fields} } } }`,
      variables: { ext: m.externalId },
    });
    expect(gql.body.data.member).toEqual(rest);
    expect(gql.body.data.members.results.find((x: { id: string }) => x.id === m.id)).toEqual(rest);
    const withField = await app.http.post('/graphql').set(auth(t)).send({
      query: `{ member(ref: { id: "${m.id}" }) { additionalFields { id value field { id name type orderNumber } } } }`,
    });
    expect(withField.body.data.member.additionalFields).toEqual([{ id: phone, value: '1', field: { id: phone, name: 'Phone', type: 'TEXT', orderNumber: 2 } }]);
  });
});
