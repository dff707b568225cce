import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, FIELDS as URL, memberApi } from '../../helpers/members';

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

describe('tenancy and scopes', () => {
  it('another community gets 404 on every id-addressed route and never sees the field', async () => {
    const other = await app.tenant();
    const f = await createField({ name: 'private' });
    expectProblem(await app.http.get(`${URL}/${f.id}`).set(auth(other)), 404);
    expectProblem(await app.http.patch(`${URL}/${f.id}`).set(auth(other)).send({ name: 'stolen' }), 404);
    expectProblem(await app.http.delete(`${URL}/${f.id}`).set(auth(other)), 404);
    const list = await app.http.get(`${URL}?limit=100`).set(auth(other));
    expect(list.body.results.map((x: { id: string }) => x.id)).not.toContain(f.id);
    const gqlList = await app.http.post('/graphql').set(auth(other)).send({ query: '{ additionalFields(limit: 100) { results { id } } }' });
    expect(gqlList.body.data.additionalFields.results.map((x: { id: string }) => x.id)).not.toContain(f.id);
    const gqlOne = await app.http.post('/graphql').set(auth(other)).send({ query: `{ additionalField(ref: { id: "${f.id}" }) { id } }` });
    expect(gqlOne.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await getField(f.id)).name).toBe('private');
  });

  it('403 for a key without the additional_fields scope; :read may GET but not write', async () => {
    const f = await createField({});
    const groupsOnly = await app.tenant({ scopes: ['groups'] });
    const readOnly = await app.tenant({ scopes: ['additional_fields:read'] });
    const body = { name: 'x', type: 'TEXT' };
    for (const key of [groupsOnly]) {
      expectProblem(await app.http.get(URL).set(auth(key)), 403);
      expectProblem(await app.http.post(URL).set(auth(key)).send(body), 403);
      expectProblem(await app.http.get(`${URL}/${f.id}`).set(auth(key)), 403);
      expectProblem(await app.http.patch(`${URL}/${f.id}`).set(auth(key)).send({ name: 'y' }), 403);
      expectProblem(await app.http.delete(`${URL}/${f.id}`).set(auth(key)), 403);
    }
    expect((await app.http.get(URL).set(auth(readOnly))).status).toBe(200);
    expectProblem(await app.http.post(URL).set(auth(readOnly)).send(body), 403);
    expectProblem(await app.http.patch(`${URL}/${f.id}`).set(auth(readOnly)).send({ name: 'y' }), 403);
    expectProblem(await app.http.delete(`${URL}/${f.id}`).set(auth(readOnly)), 403);
    expectProblem(await app.http.get(URL), 401);
  });
});
