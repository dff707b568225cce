import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem } from '../../helpers/problem';

let app: TestApp;
let t: Tenant;
let other: Tenant;
const auth = (tenant: Tenant) => ({ 'X-API-Key': tenant.key });

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  other = await app.tenant();
});
afterAll(() => app.close());

async function createGroup(body: Record<string, unknown>, tenant = t) {
  const res = await app.http.post('/api/v1/groups').set(auth(tenant)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; externalId: string | null };
}

describe('POST /api/v1/groups', () => {
  it('creates a group and answers ApiInsertResponse', async () => {
    const res = await app.http.post('/api/v1/groups').set(auth(t)).send({
      externalId: 'grp-1',
      name: 'Board',
      about: 'The board',
      color: '#A1b2C3',
      isVisibleInApp: false,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), externalId: 'grp-1' });
    const got = await app.http.get(`/api/v1/groups/${res.body.id}`).set(auth(t));
    expect(got.body).toMatchObject({
      id: res.body.id,
      externalId: 'grp-1',
      name: 'Board',
      about: 'The board',
      color: '#A1b2C3',
      isVisibleInApp: false,
      membershipCount: 0,
      state: 'ORIGINAL',
    });
    expect(got.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(got.body.modifiedAt).toBe(got.body.createdAt);
  });

  it('defaults: externalId null, isVisibleInApp true', async () => {
    const created = await createGroup({ name: 'Plain' });
    expect(created.externalId).toBeNull();
    const got = await app.http.get(`/api/v1/groups/${created.id}`).set(auth(t));
    expect(got.body).toMatchObject({ isVisibleInApp: true, about: null, color: null });
  });

  it.each([
    [{}, '/name'],
    [{ name: null }, '/name'],
    [{ name: '' }, '/name'],
    [{ name: 'x'.repeat(257) }, '/name'],
    [{ name: 42 }, '/name'],
    [{ name: 'a', about: 'x'.repeat(2049) }, '/about'],
    [{ name: 'a', color: 'red' }, '/color'],
    [{ name: 'a', color: '#12345' }, '/color'],
    [{ name: 'a', color: '#1234567' }, '/color'],
    [{ name: 'a', isVisibleInApp: 'yes' }, '/isVisibleInApp'],
    [{ name: 'a', externalId: '' }, '/externalId'],
    [{ name: 'a', externalId: 'has space' }, '/externalId'],
    [{ name: 'a', externalId: 'x'.repeat(129) }, '/externalId'],
    [{ name: 'a', unknown: 1 }, '/unknown'],
    [{ name: 'a', id: 'abc' }, '/id'],
    [{ name: 'a', state: 'ARCHIVED' }, '/state'],
    [{ name: 'a', membershipCount: 3 }, '/membershipCount'],
    [{ name: 'a', createdAt: '2020-01-01T00:00:00.000Z' }, '/createdAt'],
  ])('rejects %j naming %s', async (body, pointer) => {
    const before = await app.http.get('/api/v1/groups?limit=100').set(auth(t));
    const res = await app.http.post('/api/v1/groups').set(auth(t)).send(body);
    expectProblem(res, 400, pointer);
    const after = await app.http.get('/api/v1/groups?limit=100').set(auth(t));
    expect(after.body.size).toBe(before.body.size);
  });

  it('rejects a body that is not a JSON object, malformed JSON and non-JSON content', async () => {
    expectProblem(await app.http.post('/api/v1/groups').set(auth(t)).send([{ name: 'a' }]), 400);
    expectProblem(
      await app.http.post('/api/v1/groups').set(auth(t)).set('Content-Type', 'application/json').send('{"name": '),
      400,
    );
    expectProblem(await app.http.post('/api/v1/groups').set(auth(t)).set('Content-Type', 'text/plain').send('name=a'), 400);
  });

  it('answers 413 for bodies over 1 MiB', async () => {
    const res = await app.http.post('/api/v1/groups').set(auth(t)).send({ name: 'a', about: 'x'.repeat(1024 * 1024 + 10) });
    expectProblem(res, 413);
  });

  it('answers 409 naming externalId when it is taken in the community, but not across communities', async () => {
    await createGroup({ name: 'A', externalId: 'dup-1' });
    expectProblem(await app.http.post('/api/v1/groups').set(auth(t)).send({ name: 'B', externalId: 'dup-1' }), 409, '/externalId');
    await createGroup({ name: 'C', externalId: 'dup-1' }, other);
  });
});

describe('GET /api/v1/groups/{identifier}', () => {
  it('reads by id and by key=externalId; key=id is the default', async () => {
    const g = await createGroup({ name: 'Lookup', externalId: 'look.up@1' });
    for (const url of [`/api/v1/groups/${g.id}`, `/api/v1/groups/${g.id}?key=id`, `/api/v1/groups/look.up@1?key=externalId`]) {
      const res = await app.http.get(url).set(auth(t));
      expect(res.status, url).toBe(200);
      expect(res.body.id).toBe(g.id);
    }
  });

  it('404 for unknown ids, non-UUID ids and unknown externalIds', async () => {
    expectProblem(await app.http.get('/api/v1/groups/00000000-0000-4000-8000-000000000000').set(auth(t)), 404);
    expectProblem(await app.http.get('/api/v1/groups/not-an-id').set(auth(t)), 404);
    expectProblem(await app.http.get('/api/v1/groups/nope?key=externalId').set(auth(t)), 404);
  });

  it('400 for a key value other than id or externalId', async () => {
    const g = await createGroup({ name: 'K' });
    expectProblem(await app.http.get(`/api/v1/groups/${g.id}?key=name`).set(auth(t)), 400, '#/query/key');
  });

  it('answers the same record as GraphQL', async () => {
    const g = await createGroup({ name: 'Same', externalId: 'same-1', about: 'x', color: '#000000' });
    const rest = await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t));
    const gql = await app.http
      .post('/graphql')
      .set(auth(t))
      .send({
        query: `query($id: ID) { group(ref: { id: $id }) { id externalId name about color membershipCount isVisibleInApp state createdAt modifiedAt } }`,
        variables: { id: g.id },
      });
    expect(gql.body.data.group).toEqual(rest.body);
  });
});

describe('PATCH /api/v1/groups/{identifier}', () => {
  it('updates given fields, answers 204 without a body, and moves modifiedAt', async () => {
    const g = await createGroup({ name: 'Old', about: 'keep' });
    const before = (await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body;
    await new Promise((r) => setTimeout(r, 5));
    const res = await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({ name: 'New', color: '#ffffff' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const after = (await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body;
    expect(after).toMatchObject({ name: 'New', about: 'keep', color: '#ffffff', createdAt: before.createdAt });
    expect(new Date(after.modifiedAt).getTime()).toBeGreaterThan(new Date(before.modifiedAt).getTime());
  });

  it('patches by key=externalId and can change the externalId', async () => {
    await createGroup({ name: 'P', externalId: 'p-old' });
    expect((await app.http.patch('/api/v1/groups/p-old?key=externalId').set(auth(t)).send({ externalId: 'p-new' })).status).toBe(204);
    expect((await app.http.get('/api/v1/groups/p-new?key=externalId').set(auth(t))).status).toBe(200);
    expectProblem(await app.http.get('/api/v1/groups/p-old?key=externalId').set(auth(t)), 404);
  });

  it('an empty body is a no-op 204', async () => {
    const g = await createGroup({ name: 'Same' });
    const before = (await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body;
    expect((await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({})).status).toBe(204);
    expect((await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t))).status).toBe(204);
    expect((await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body).toEqual(before);
  });

  it('rejects bad values, read-only fields and a null name; changes nothing', async () => {
    const g = await createGroup({ name: 'Stay' });
    const before = (await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body;
    expectProblem(await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({ name: null }), 400, '/name');
    expectProblem(await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({ name: 'x', color: 'blue' }), 400, '/color');
    expectProblem(await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({ state: 'ARCHIVED' }), 400, '/state');
    expect((await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body).toEqual(before);
  });

  it('409 when the new externalId is taken; 404 for a missing group', async () => {
    await createGroup({ name: 'X', externalId: 'taken-x' });
    const g = await createGroup({ name: 'Y', externalId: 'free-y' });
    expectProblem(await app.http.patch(`/api/v1/groups/${g.id}`).set(auth(t)).send({ externalId: 'taken-x' }), 409, '/externalId');
    expectProblem(await app.http.patch('/api/v1/groups/00000000-0000-4000-8000-000000000000').set(auth(t)).send({ name: 'z' }), 404);
  });
});

describe('DELETE /api/v1/groups/{identifier}', () => {
  it('deletes by id and by externalId with 204 and no body; then 404', async () => {
    const a = await createGroup({ name: 'Del A' });
    await createGroup({ name: 'Del B', externalId: 'del-b' });
    const r1 = await app.http.delete(`/api/v1/groups/${a.id}`).set(auth(t));
    expect(r1.status).toBe(204);
    expect(r1.text).toBe('');
    expect((await app.http.delete('/api/v1/groups/del-b?key=externalId').set(auth(t))).status).toBe(204);
    expectProblem(await app.http.get(`/api/v1/groups/${a.id}`).set(auth(t)), 404);
    expectProblem(await app.http.delete(`/api/v1/groups/${a.id}`).set(auth(t)), 404);
  });
});

describe('tenancy', () => {
  it('another community gets 404 on every id-addressed route and never sees the group', async () => {
    const g = await createGroup({ name: 'Private', externalId: 'private-1' });
    for (const path of [`/api/v1/groups/${g.id}`, '/api/v1/groups/private-1?key=externalId']) {
      expectProblem(await app.http.get(path).set(auth(other)), 404);
      expectProblem(await app.http.patch(path).set(auth(other)).send({ name: 'hijack' }), 404);
      expectProblem(await app.http.delete(path).set(auth(other)), 404);
    }
    const list = await app.http.get('/api/v1/groups?limit=100').set(auth(other));
    expect(list.body.results.map((r: { id: string }) => r.id)).not.toContain(g.id);
    const gql = await app.http.post('/graphql').set(auth(other)).send({ query: '{ groups(limit: 100) { results { id } } }' });
    expect(gql.body.data.groups.results.map((r: { id: string }) => r.id)).not.toContain(g.id);
    const byRef = await app.http.post('/graphql').set(auth(other)).send({ query: `{ group(ref: { id: "${g.id}" }) { id } }` });
    expect(byRef.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body.name).toBe('Private');
  });
});

describe('GraphQL archive and restore', () => {
  it('moves state between ORIGINAL and ARCHIVED; REST input cannot', async () => {
    const g = await createGroup({ name: 'Arch' });
    const gql = (query: string) => app.http.post('/graphql').set(auth(t)).send({ query, variables: { id: g.id } });
    const archived = await gql('mutation($id: ID) { archiveGroup(ref: { id: $id }) { state } }');
    expect(archived.body.data.archiveGroup.state).toBe('ARCHIVED');
    expect((await app.http.get(`/api/v1/groups/${g.id}`).set(auth(t))).body.state).toBe('ARCHIVED');
    const restored = await gql('mutation($id: ID) { restoreGroup(ref: { id: $id }) { state } }');
    expect(restored.body.data.restoreGroup.state).toBe('ORIGINAL');
  });
});
