import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { gqlWith, sqlWith } from '../helpers/jobs';
import { expectProblem } from '../helpers/problem';
import { countSql } from '../helpers/sql-count';

let app: TestApp;
let t: Tenant;
const auth = (tenant: Tenant) => ({ 'X-API-Key': tenant.key });

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
});
afterAll(() => app.close());

async function post(path: string, body: object): Promise<string> {
  const res = await app.http.post(`/api/v1${path}`).set(auth(t)).send(body);
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** Every single-record resource: where it lives and a body that changes it. */
async function resources() {
  const groupId = await post('/groups', { name: 'G' });
  const memberId = await post('/members', { firstName: 'M' });
  const membershipId = await post(`/groups/${groupId}/memberships`, { memberId });
  const fieldId = await post('/additional_fields', { name: 'F', type: 'TEXT' });
  return [
    { path: `/groups/${groupId}`, change: (i: number) => ({ name: `G${i}` }) },
    { path: `/members/${memberId}`, change: (i: number) => ({ firstName: `M${i}` }) },
    { path: `/groups/${groupId}/memberships/${membershipId}`, change: (i: number) => ({ title: `T${i}` }) },
    { path: `/additional_fields/${fieldId}`, change: (i: number) => ({ name: `F${i}` }) },
  ];
}

describe('ETag, If-None-Match and If-Match', () => {
  it('on groups, members, memberships and additional fields: 304 when unchanged, 412 on a stale If-Match, 204 on the current one', async () => {
    for (const r of await resources()) {
      const first = await app.http.get(`/api/v1${r.path}`).set(auth(t));
      expect(first.status).toBe(200);
      const etag = first.headers.etag;
      expect(etag, r.path).toMatch(/^"[^"]+"$/);
      expect(first.body).not.toHaveProperty('_etag');

      const notModified = await app.http.get(`/api/v1${r.path}`).set(auth(t)).set('If-None-Match', etag);
      expect(notModified.status).toBe(304);
      expect(notModified.text ?? '').toBe('');
      expect(notModified.headers.etag).toBe(etag);

      await app.http.patch(`/api/v1${r.path}`).set(auth(t)).set('If-Match', etag).send(r.change(1)).expect(204);
      const changed = await app.http.get(`/api/v1${r.path}`).set(auth(t)).set('If-None-Match', etag);
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).not.toBe(etag);

      const stale = await app.http.patch(`/api/v1${r.path}`).set(auth(t)).set('If-Match', etag).send(r.change(2));
      expectProblem(stale, 412, '#/header/If-Match');
      const after = await app.http.get(`/api/v1${r.path}`).set(auth(t));
      expect(after.body).toEqual(changed.body); // the stale write changed nothing

      const staleDelete = await app.http.delete(`/api/v1${r.path}`).set(auth(t)).set('If-Match', etag);
      expectProblem(staleDelete, 412);
      await app.http.get(`/api/v1${r.path}`).set(auth(t)).expect(200);
    }
  });

  it('a 304 reads only the version: fewer statements than the full answer (no field values of a member)', async () => {
    const fieldId = await post('/additional_fields', { name: 'Counted', type: 'TEXT' });
    const id = await post('/members', { firstName: 'C', additionalFields: [{ id: fieldId, value: 'v' }] });
    const { etag } = (await app.http.get(`/api/v1/members/${id}`).set(auth(t))).headers;
    const counter = countSql(app.runtime);
    try {
      counter.reset();
      await app.http.get(`/api/v1/members/${id}`).set(auth(t)).set('If-None-Match', etag).expect(304);
      const notModified = counter.count('orm');
      const seen = JSON.stringify(counter.statements);
      counter.reset();
      const full = await app.http.get(`/api/v1/members/${id}`).set(auth(t)).expect(200);
      expect(full.body.additionalFields).toEqual([{ id: fieldId, value: 'v' }]);
      expect(notModified, seen).toBe(1);
      expect(counter.count('orm')).toBeGreaterThan(notModified);
    } finally {
      counter.stop();
    }
  });

  it('DELETE with the current If-Match deletes; If-Match: * and no If-Match stay unconditional', async () => {
    const id = await post('/groups', { name: 'D' });
    const { etag } = (await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).headers;
    await app.http.patch(`/api/v1/groups/${id}`).set(auth(t)).set('If-Match', '*').send({ name: 'D2' }).expect(204);
    const current = (await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).headers.etag;
    expect(current).not.toBe(etag);
    await app.http.delete(`/api/v1/groups/${id}`).set(auth(t)).set('If-Match', current).expect(204);
    await app.http.get(`/api/v1/groups/${id}`).set(auth(t)).expect(404);
  });

  it('two writes within one millisecond still give different ETags', async () => {
    const id = await post('/groups', { name: 'Fast' });
    const sql = sqlWith(app);
    const tags = new Set<string>();
    for (let i = 0; i < 3; i++) {
      // Same modifiedAt each time: only the row version can tell the writes apart.
      await sql(`update groups set name = ?, modified_at = '2026-01-01T00:00:00.000Z' where id = ?`, [`Fast${i}`, id]);
      tags.add((await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).headers.etag);
    }
    expect(tags.size).toBe(3);
  });

  it('a weak or malformed If-Match: weak never matches (412), malformed is a 400 naming the header', async () => {
    const id = await post('/groups', { name: 'W' });
    const { etag } = (await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).headers;
    expectProblem(await app.http.patch(`/api/v1/groups/${id}`).set(auth(t)).set('If-Match', `W/${etag}`).send({ name: 'W2' }), 412);
    expectProblem(await app.http.patch(`/api/v1/groups/${id}`).set(auth(t)).set('If-Match', 'no-quotes').send({ name: 'W2' }), 400, '#/header/If-Match');
  });

  it('GraphQL: version and expectedVersion mean the same as ETag and If-Match', async () => {
    const gql = gqlWith(app);
    const created = await gql('mutation { createGroup(input: { name: "Q" }) { id version } }', {}, t.key);
    const { id, version } = created.data.createGroup;
    const rest = await app.http.get(`/api/v1/groups/${id}`).set(auth(t));
    expect(rest.headers.etag).toBe(`"${version}"`);
    const ok = await gql('mutation($id: ID!, $v: String) { updateGroup(ref: { id: $id }, input: { name: "Q2" }, expectedVersion: $v) { version } }', { id, v: version }, t.key);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.updateGroup.version).not.toBe(version);
    const stale = await gql('mutation($id: ID!, $v: String) { updateGroup(ref: { id: $id }, input: { name: "Q3" }, expectedVersion: $v) { id } }', { id, v: version }, t.key);
    expect(stale.errors?.[0].extensions.code).toBe('PRECONDITION_FAILED');
    const read = await gql('query($id: ID!) { group(ref: { id: $id }) { name version } }', { id }, t.key);
    expect(read.data.group).toEqual({ name: 'Q2', version: ok.data.updateGroup.version });
  });
});

describe('modifiedSince', () => {
  it('lists exactly the records modified at or after the instant, across pages and with sort', async () => {
    const tenant = await app.tenant();
    const sql = sqlWith(app);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await app.http.post('/api/v1/groups').set(auth(tenant)).send({ name: `g${i}` });
      ids.push(res.body.id);
    }
    // Fixed instants: three before the cut, four at or after it.
    for (const [i, id] of ids.entries()) {
      await sql('update groups set modified_at = ? where id = ?', [new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), id]);
    }
    const since = new Date(Date.UTC(2026, 0, 1, 0, 0, 3)).toISOString();
    const seen: string[] = [];
    let url: string | undefined = `/api/v1/groups?modifiedSince=${encodeURIComponent(since)}&limit=3&sort=modifiedAt:desc`;
    while (url) {
      const page: { status: number; body: any } = await app.http.get(url).set(auth(tenant));
      expect(page.status).toBe(200);
      seen.push(...page.body.results.map((g: { id: string }) => g.id));
      url = page.body._links.next ? `/api/v1${page.body._links.next.replace(/^.*\/api\/v1/, '')}` : undefined;
    }
    expect(seen).toEqual(ids.slice(3).reverse());
  });

  it('applies to members, memberships and additional fields too', async () => {
    const tenant = await app.tenant();
    const since = new Date(Date.now() + 60_000).toISOString(); // nothing is that new
    const groupId = (await app.http.post('/api/v1/groups').set(auth(tenant)).send({ name: 'g' })).body.id;
    const memberId = (await app.http.post('/api/v1/members').set(auth(tenant)).send({ firstName: 'm' })).body.id;
    await app.http.post(`/api/v1/groups/${groupId}/memberships`).set(auth(tenant)).send({ memberId }).expect(201);
    await app.http.post('/api/v1/additional_fields').set(auth(tenant)).send({ name: 'f', type: 'TEXT' }).expect(201);
    for (const path of ['/members', `/groups/${groupId}/memberships`, '/additional_fields']) {
      const all = await app.http.get(`/api/v1${path}`).set(auth(tenant));
      expect(all.body.results.length, path).toBe(1);
      const none = await app.http.get(`/api/v1${path}?modifiedSince=${encodeURIComponent(since)}`).set(auth(tenant));
      expect(none.body.results, path).toEqual([]);
      const past = await app.http.get(`/api/v1${path}?modifiedSince=2000-01-01T00:00:00Z`).set(auth(tenant));
      expect(past.body.results.length, path).toBe(1);
    }
  });

  it('GraphQL: the lists and the nested memberships of a group take modifiedSince too', async () => {
    const tenant = await app.tenant();
    const groupId = (await app.http.post('/api/v1/groups').set(auth(tenant)).send({ name: 'g' })).body.id;
    const memberId = (await app.http.post('/api/v1/members').set(auth(tenant)).send({ firstName: 'm' })).body.id;
    await app.http.post(`/api/v1/groups/${groupId}/memberships`).set(auth(tenant)).send({ memberId }).expect(201);
    const query = `query($id: ID!, $since: DateTimeISO) {
      group(ref: { id: $id }) { memberships(modifiedSince: $since) { size } }
      members(modifiedSince: $since) { size }
    }`;
    const gql = gqlWith(app);
    const past = await gql(query, { id: groupId, since: '2000-01-01T00:00:00.000Z' }, tenant.key);
    expect(past.data).toEqual({ group: { memberships: { size: 1 } }, members: { size: 1 } });
    const future = await gql(query, { id: groupId, since: new Date(Date.now() + 60_000).toISOString() }, tenant.key);
    expect(future.data).toEqual({ group: { memberships: { size: 0 } }, members: { size: 0 } });
  });

  it('a malformed timestamp is a 400 naming #/query/modifiedSince', async () => {
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-01-01']) {
      expectProblem(await app.http.get(`/api/v1/groups?modifiedSince=${bad}`).set(auth(t)), 400, '#/query/modifiedSince');
    }
  });
});
