import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSqlCount } from '../../helpers/sql-count';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, MEMBERS as URL, memberApi, NO_ID, pointers } from '../../helpers/members';

let app: TestApp;
let api: ReturnType<typeof memberApi>;
let t: Tenant;
let phone: string;

beforeAll(async () => {
  app = await startTestApp();
  api = memberApi(app);
  t = await app.tenant();
  phone = await api.createField(t, { name: 'Phone', orderNumber: 2 });
});
afterAll(() => app.close());

const createMember = (body: Record<string, unknown>, tenant = t) => api.createMember(tenant, body);
const count = (tenant: Tenant) => api.countMembers(tenant);

describe('POST /api/v1/members/_bulk', () => {
  const bulk = (members: unknown, tenant = t) => app.http.post(`${URL}/_bulk`).set(auth(tenant)).send({ members });

  it('creates all members atomically and answers ApiInsertResponses in input order', async () => {
    const tenant = await app.tenant();
    const field = (await app.http.post('/api/v1/additional_fields').set(auth(tenant)).send({ name: 'F', type: 'TEXT' })).body.id;
    const members = [
      { externalId: 'b-1', firstName: 'Zed' },
      { firstName: 'Amy', emailAddress: 'amy@example.com', additionalFields: [{ id: field, value: 'v2' }] },
      { externalId: 'b-3', lastName: 'Moe', additionalFields: [{ id: field, value: 'v3' }] },
    ];
    const res = await bulk(members, tenant);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual([
      { id: expect.any(String), externalId: 'b-1' },
      { id: expect.any(String), externalId: null },
      { id: expect.any(String), externalId: 'b-3' },
    ]);
    const list = (await app.http.get(URL).set(auth(tenant))).body.results;
    expect(list.map((m: { id: string }) => m.id)).toEqual(res.body.map((r: { id: string }) => r.id));
    expect(list[1]).toMatchObject({ firstName: 'Amy', emailAddress: 'amy@example.com', additionalFields: [{ id: field, value: 'v2' }] });
    expect(list[2].additionalFields).toEqual([{ id: field, value: 'v3' }]);
  });

  it('one bad item: 400 with a pointer per failing item, and nothing is saved', async () => {
    const before = await count(t);
    const res = await bulk([
      { firstName: 'ok' },
      { firstName: 'bad', emailAddress: 'nope' },
      { firstName: 'ok2' },
      { lastName: '', additionalFields: [{ id: NO_ID, value: 'x' }] },
      {},
    ]);
    const body = expectProblem(res, 400);
    expect(pointers(body)).toEqual(['/members/1/emailAddress', '/members/3/additionalFields/0/id', '/members/3/lastName', '/members/4']);
    expect(await count(t)).toBe(before);
  });

  it('structural problems (unknown, read-only or mistyped fields) are reported per item too', async () => {
    const before = await count(t);
    const body = expectProblem(await bulk([{ firstName: 'ok' }, { firstName: 'x', nickname: 'y' }, { firstName: 1 }, { id: NO_ID, firstName: 'z' }]), 400);
    expect(pointers(body)).toEqual(['/members/1/nickname', '/members/2/firstName', '/members/3/id']);
    expect(await count(t)).toBe(before);
  });

  it('400 for duplicates within the batch (externalId, email case-insensitively), pointing at the repeats', async () => {
    const before = await count(t);
    const body = expectProblem(await bulk([
      { externalId: 'dup-1', emailAddress: 'dup@example.com' },
      { externalId: 'dup-2' },
      { externalId: 'dup-1' },
      { emailAddress: 'DUP@example.com' },
    ]), 400);
    expect(pointers(body)).toEqual(['/members/2/externalId', '/members/3/emailAddress']);
    expect(await count(t)).toBe(before);
  });

  it('409 with item pointers when values are taken by existing members; nothing is saved', async () => {
    await createMember({ externalId: 'exists-1', emailAddress: 'exists@example.com' });
    const before = await count(t);
    const body = expectProblem(await bulk([{ externalId: 'fresh-1' }, { externalId: 'exists-1' }, { emailAddress: 'Exists@Example.com' }]), 409);
    expect(pointers(body)).toEqual(['/members/1/externalId', '/members/2/emailAddress']);
    expect(await count(t)).toBe(before);
  });

  it('concurrent writers of one externalId: exactly one wins, the others get 409', async () => {
    const body = { externalId: 'race-1', firstName: 'R' };
    const single = await Promise.all(Array.from({ length: 4 }, () => app.http.post(URL).set(auth(t)).send(body)));
    expect(single.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const res of single.filter((r) => r.status === 409)) expectProblem(res, 409, '/externalId');
    const batch = await Promise.all(Array.from({ length: 3 }, () => bulk([{ firstName: 'x' }, { externalId: 'race-2' }])));
    expect(batch.map((r) => r.status).sort()).toEqual([201, 409, 409]);
  });

  it('400 for an empty batch, more than 1000 items, and a missing or malformed members array', async () => {
    expectProblem(await bulk([]), 400, '/members');
    const before = await count(t);
    expectProblem(await bulk(Array.from({ length: 1001 }, (_, i) => ({ firstName: `n${i}` }))), 400, '/members');
    expect(await count(t)).toBe(before);
    expectProblem(await app.http.post(`${URL}/_bulk`).set(auth(t)).send({}), 400, '/members');
    expectProblem(await bulk({ firstName: 'x' }), 400, '/members');
    expectProblem(await bulk([null]), 400, '/members/0');
    expectProblem(await app.http.post(`${URL}/_bulk`).set(auth(t)).send({ members: [{ firstName: 'x' }], extra: 1 }), 400, '/extra');
    expectProblem(await app.http.post(`${URL}/_bulk`).set(auth(t)).send([{ firstName: 'x' }]), 400, '/');
  });

  it('takes 1000 members with values in a constant number of statements', async () => {
    const tenant = await app.tenant();
    const field = (await app.http.post('/api/v1/additional_fields').set(auth(tenant)).send({ name: 'F', type: 'TEXT' })).body.id;
    const items = (n: number, p: string) =>
      Array.from({ length: n }, (_, i) => ({ externalId: `${p}-${i}`, emailAddress: `${p}${i}@example.com`, additionalFields: [{ id: field, value: `v${i}` }] }));
    const small = await withSqlCount(app.runtime, () => bulk(items(2, 's'), tenant));
    const big = await withSqlCount(app.runtime, () => bulk(items(1000, 'b'), tenant));
    expect(small.result.status).toBe(201);
    expect(big.result.status).toBe(201);
    expect(big.result.body).toHaveLength(1000);
    expect(big.result.body[999].externalId).toBe('b-999');
    expect(big.orm).toBe(small.orm);
    expect(big.orm).toBeLessThanOrEqual(6); // BEGIN, field ids, taken values, members, values, COMMIT
    expect(await count(tenant)).toBe(1002);
  });
});

describe('GraphQL', () => {
  const gql = (query: string, variables: Record<string, unknown> = {}, tenant = t) =>
    app.http.post('/graphql').set(auth(tenant)).send({ query, variables });

  it('createMembers reports item issues with paths that mirror the REST pointers', async () => {
    const res = await gql('mutation($input: CreateMembersInput!) { createMembers(input: $input) { id } }', {
      input: { members: [{ firstName: 'ok' }, { emailAddress: 'bad' }] },
    });
    expect(res.body.errors[0].extensions.code).toBe('VALIDATION');
    expect(res.body.errors[0].extensions.errors).toEqual([{ path: ['input', 'members', 1, 'emailAddress'], detail: expect.any(String) }]);
  });

  it('create, update and delete through mutations', async () => {
    const created = await gql(
      'mutation($input: CreateMemberInput!) { createMember(input: $input) { id firstName additionalFields { id value } } }',
      { input: { firstName: 'Gq', additionalFields: [{ id: phone, value: '9' }] } },
    );
    const id = created.body.data.createMember.id;
    expect(created.body.data.createMember.additionalFields).toEqual([{ id: phone, value: '9' }]);
    const updated = await gql('mutation($id: ID!) { updateMember(ref: { id: $id }, input: { lastName: "Ql" }) { lastName } }', { id });
    expect(updated.body.data.updateMember.lastName).toBe('Ql');
    expect((await gql('mutation($id: ID!) { deleteMember(ref: { id: $id }) }', { id })).body.data.deleteMember).toBe(true);
  });

  it('a page of 100 members with their additional fields costs as many statements as a page of 5', async () => {
    const tenant = await app.tenant();
    const fields: string[] = [];
    for (const name of ['f1', 'f2', 'f3']) {
      fields.push((await app.http.post('/api/v1/additional_fields').set(auth(tenant)).send({ name, type: 'TEXT' })).body.id);
    }
    const members = Array.from({ length: 100 }, (_, i) => ({ firstName: `m${i}`, additionalFields: fields.map((id) => ({ id, value: `${i}` })) }));
    expect((await app.http.post(`${URL}/_bulk`).set(auth(tenant)).send({ members })).status).toBe(201);
    const query = 'query($limit: Int) { members(limit: $limit) { results { id additionalFields { id value field { id name orderNumber } } } } }';
    const page = (limit: number) => withSqlCount(app.runtime, () => gql(query, { limit }, tenant));
    const five = await page(5);
    const hundred = await page(100);
    expect(five.result.body.data.members.results).toHaveLength(5);
    expect(hundred.result.body.data.members.results).toHaveLength(100);
    expect(hundred.result.body.data.members.results[99].additionalFields.map((v: { field: { name: string } }) => v.field.name)).toEqual(['f1', 'f2', 'f3']);
    expect(hundred.orm).toBe(five.orm);
    expect(hundred.orm).toBeLessThanOrEqual(3); // members, values, fields
  });
});
