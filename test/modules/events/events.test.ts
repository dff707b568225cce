import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { expectProblem, keyFor } from '../../helpers/factories';
import { gqlWith, sleep, sqlWith } from '../../helpers/jobs';
import { auth } from '../../helpers/members';
import { asTestOwner } from '../../helpers/owner';

let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  app = await startTestApp({}, { worker: { pollInterval: 200 } });
  t = await app.tenant();
});
afterAll(() => app.close());

type Ev = { id: string; type: string; createdAt: string; data: Record<string, any>; changes: string[] | null };

/** Every event of the tenant after `after`, paging through `_links.next`. */
async function feed(tenant: Tenant = t, query = ''): Promise<Ev[]> {
  const out: Ev[] = [];
  let url = `/api/v1/events?limit=100${query}`;
  for (;;) {
    const res = await app.http.get(url).set(auth(tenant));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.results);
    if (!res.body._links.next) return out;
    url = res.body._links.next;
  }
}

/** The events that came after the last one seen so far. */
async function newEvents(tenant: Tenant, since: Ev[]): Promise<Ev[]> {
  const last = since.at(-1);
  return feed(tenant, last ? `&after=${last.id}` : '');
}

const post = async (path: string, body: object, tenant = t) => {
  const res = await app.http.post(`/api/v1${path}`).set(auth(tenant)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};

describe('the outbox: every committed change is an event, in the same transaction', () => {
  it('group created, updated, deleted: data is the record as GET returns it', async () => {
    const before = await feed();
    const { id } = await post('/groups', { name: 'Choir', externalId: 'choir' });
    const created = (await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).body;
    expect((await app.http.patch(`/api/v1/groups/${id}`).set(auth(t)).send({ name: 'Big choir', color: '#aabbcc' })).status).toBe(204);
    const updated = (await app.http.get(`/api/v1/groups/${id}`).set(auth(t))).body;
    expect((await app.http.delete(`/api/v1/groups/${id}`).set(auth(t))).status).toBe(204);
    const events = await newEvents(t, before);
    expect(events.map((e) => e.type)).toEqual(['group.created', 'group.updated', 'group.deleted']);
    expect(events[0].data).toEqual(created);
    expect(events[0].changes).toBeNull();
    expect(events[1].data).toEqual(updated);
    expect(events[1].changes).toEqual(['color', 'name']);
    expect(events[2].data).toEqual({ id, externalId: 'choir' });
    for (const e of events) expect(e.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('a no-op PATCH and a failed write leave no event', async () => {
    const { id } = await post('/groups', { name: 'Quiet', externalId: 'quiet' });
    const before = await feed();
    expect((await app.http.patch(`/api/v1/groups/${id}`).set(auth(t)).send({ name: 'Quiet' })).status).toBe(204);
    // 409 at the unique index: the INSERT ran, its trigger appended an event, the rollback took both
    expectProblem(await app.http.post('/api/v1/groups').set(auth(t)).send({ name: 'Twin', externalId: 'quiet' }), 409, '/externalId');
    const member = await post('/members', { firstName: 'Ann' });
    const afterMember = await feed();
    const group = await post('/groups', { name: 'Bulk target' });
    const afterGroup = await feed();
    // a bulk with one bad item is atomic: nothing saved, no event
    const bad = await app.http
      .post(`/api/v1/groups/${group.id}/memberships/_bulk`)
      .set(auth(t))
      .send({ groupMemberships: [{ memberId: member.id }, { memberId: '00000000-0000-4000-8000-000000000000' }] });
    expectProblem(bad, 400);
    expect(await newEvents(t, afterGroup)).toEqual([]);
    expect((await newEvents(t, before)).map((e) => e.type)).toEqual(['member.created', 'group.created']);
    expect(afterMember.length).toBe(before.length + 1);
  });

  it('bulk creates, reorders and cascades: one event per row, one reordered per order operation', async () => {
    const group = await post('/groups', { name: 'Band' });
    const members = await Promise.all(['a', 'b', 'c'].map((n) => post('/members', { externalId: `band-${n}` })));
    const before = await feed();
    const bulk = await app.http
      .post(`/api/v1/groups/${group.id}/memberships/_bulk`)
      .set(auth(t))
      .send({ groupMemberships: members.map((m) => ({ memberId: m.id })) });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(201);
    const ids: string[] = bulk.body.map((r: { id: string }) => r.id);
    const order = await app.http
      .patch(`/api/v1/groups/${group.id}/memberships/order`)
      .set(auth(t))
      .send({ order: [...ids].reverse().map((id) => ({ id })) });
    expect(order.status, JSON.stringify(order.body)).toBeLessThan(300);
    expect((await app.http.delete(`/api/v1/members/${members[0].id}`).set(auth(t))).status).toBe(204);
    const events = await newEvents(t, before);
    expect(events.map((e) => e.type)).toEqual([
      'group_membership.created',
      'group_membership.created',
      'group_membership.created',
      'group_membership.reordered',
      'member.deleted',
      'group_membership.deleted',
    ]);
    expect(events.slice(0, 3).map((e) => e.data.id)).toEqual(ids);
    const read = (await app.http.get(`/api/v1/groups/${group.id}/memberships/${ids[1]}`).set(auth(t))).body;
    expect(events[1].data).toMatchObject({ ...read, orderNumber: 2, modifiedAt: events[1].data.modifiedAt, groupId: group.id });
    expect(events[3].data).toEqual({ groupId: group.id });
    expect(events[4].data).toEqual({ id: members[0].id, externalId: 'band-a' });
    expect(events[5].data).toEqual({ id: ids[0], externalId: null, groupId: group.id });
  });

  it('a bulk appended to a group with memberships and a member import: the answers and every event are the records as GET reads them', async () => {
    const group = await post('/groups', { name: 'Appended', externalId: 'appended' });
    const members = await Promise.all(['a', 'b', 'c', 'd'].map((n) => post('/members', { externalId: `app-${n}` })));
    await post(`/groups/${group.id}/memberships/_bulk`, { groupMemberships: [{ memberId: members[0].id }] });
    const before = await feed();
    // a bulk's records are built in process (no entity constructor): its answer is what GET answers
    const FIELDS = 'id externalId memberId title orderNumber role createdAt modifiedAt';
    const res = await gqlWith(app)(
      `mutation($g: RecordRef!, $input: CreateGroupMembershipsInput!) { createGroupMemberships(groupRef: $g, input: $input) { ${FIELDS} } }`,
      {
        g: { id: group.id },
        input: {
          groupMemberships: [
            { memberId: members[1].id, externalId: 'm-b', title: 'Alto' },
            { memberExternalId: 'app-c' },
            { memberId: members[3].id, title: 'Bass' },
          ],
        },
      },
      t.key,
    );
    expect(res.errors).toBeUndefined();
    const bulk: Record<string, unknown>[] = res.data.createGroupMemberships;
    const get = async (path: string) => (await app.http.get(`/api/v1${path}`).set(auth(t))).body;
    const reads: Record<string, unknown>[] = await Promise.all(bulk.map((m) => get(`/groups/${group.id}/memberships/${m.id}`)));
    const pick = (r: Record<string, unknown>) => Object.fromEntries(FIELDS.split(' ').map((f) => [f, r[f]]));
    expect(bulk).toEqual(reads.map(pick));
    expect(reads.map((r) => [r.orderNumber, r.role, r.title])).toEqual([[2, 'MEMBER', 'Alto'], [3, 'MEMBER', null], [4, 'MEMBER', 'Bass']]);
    // a member import, with a membership: the job writes members and memberships set-based too
    const imp = await app.http
      .post('/api/v1/triggers/members/import')
      .set(auth(t))
      .send({ members: [{ externalId: 'imp-m1', firstName: 'Ida', lastName: 'M', emailAddress: 'ida-imp@example.com', groupExternalIds: ['appended'] }, { externalId: 'imp-m2', firstName: 'Jo' }] });
    expect(imp.status, JSON.stringify(imp.body)).toBe(202);
    let events: Ev[] = [];
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
      events = await newEvents(t, before);
      if (events.some((e) => e.type === 'import_job.completed')) break;
    }
    const created = events.filter((e) => e.type === 'group_membership.created');
    expect(created.map((e) => e.data.id).slice(0, 3)).toEqual(bulk.map((m) => m.id));
    expect(created.slice(0, 3).map((e) => e.data)).toEqual(reads.map((r) => ({ ...r, groupId: group.id })));
    const imported = events.filter((e) => e.type === 'member.created');
    expect(imported.map((e) => e.data.externalId)).toEqual(['imp-m1', 'imp-m2']);
    for (const e of imported) expect(e.data).toEqual(await get(`/members/${e.data.id}`));
    expect(imported[0].data.additionalFields).toEqual([]);
    expect(created).toHaveLength(4);
    const joined = await get(`/groups/${group.id}/memberships/${created[3].data.id}`);
    expect(created[3].data).toEqual({ ...joined, groupId: group.id });
    expect(joined).toMatchObject({ memberId: imported[0].data.id, memberExternalId: 'imp-m1', orderNumber: 5 });
  });

  it('a membership update is one event with its changes; a member changed in name and values at once is one event', async () => {
    const group = await post('/groups', { name: 'Trio' });
    const member = await post('/members', { externalId: 'trio-a' });
    const field = await post('/additional_fields', { name: 'Instrument', type: 'TEXT' });
    const [membership] = (await app.http.post(`/api/v1/groups/${group.id}/memberships/_bulk`).set(auth(t)).send({ groupMemberships: [{ memberId: member.id }] })).body;
    const before = await feed();
    const patched = await app.http.patch(`/api/v1/groups/${group.id}/memberships/${membership.id}`).set(auth(t)).send({ title: 'Cello' });
    expect(patched.status).toBe(204);
    const both = await app.http.patch(`/api/v1/members/${member.id}`).set(auth(t)).send({ firstName: 'Cy', additionalFields: [{ id: field.id, value: 'cello' }] });
    expect(both.status).toBe(204);
    const events = await newEvents(t, before);
    expect(events.map((e) => e.type)).toEqual(['group_membership.updated', 'member.updated']);
    expect(events[0].changes).toEqual(['title']);
    // (a membership's data names its group too: a deleted one is announced with groupId)
    const read = (await app.http.get(`/api/v1/groups/${group.id}/memberships/${membership.id}`).set(auth(t))).body;
    expect(events[0].data).toEqual({ ...read, groupId: group.id });
    expect(events[1].changes).toEqual(['additionalFields', 'firstName']);
    expect(events[1].data).toEqual((await app.http.get(`/api/v1/members/${member.id}`).set(auth(t))).body);
  });

  it('one statement writing two communities commits the events of both; several statements of one transaction share one position', async () => {
    // No route writes two communities in one statement; the commit trigger must not rely on it
    // (each statement marks one event per community it wrote: `opens`, docs/events.md).
    const { idPlace } = await import('../../../src/modules/events/event.service');
    const sql = sqlWith(app);
    const other = await app.tenant();
    const [mine, theirs] = [await feed(), await feed(other)];
    const names = ['Two communities A', 'Two communities B', 'Two communities C'];
    await sql(
      `insert into groups (id, community_id, name, created_at, modified_at)
       select gen_random_uuid(), c.id, c.name, now(), now() from (values (?::uuid, ?), (?::uuid, ?), (?::uuid, ?)) as c(id, name)`,
      [t.communityId, names[0], other.communityId, names[1], t.communityId, names[2]],
    );
    const [ours, others] = [await newEvents(t, mine), await newEvents(other, theirs)];
    expect(ours.map((e) => [e.type, e.data.name])).toEqual([['group.created', names[0]], ['group.created', names[2]]]);
    expect(others.map((e) => [e.type, e.data.name])).toEqual([['group.created', names[1]]]);
    expect(idPlace(ours[0].id)!.position).toBe(idPlace(ours[1].id)!.position);
    expect(idPlace(others[0].id)!.position).not.toBe(idPlace(ours[0].id)!.position);

    // two statements in one transaction (a DO block), each writing events of the community
    const before = await feed();
    await sql(
      `do $$ begin
         insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), '${t.communityId}', 'First statement', now(), now());
         insert into groups (id, community_id, name, created_at, modified_at) values (gen_random_uuid(), '${t.communityId}', 'Second statement', now(), now());
       end $$`,
      [],
    );
    const both = await newEvents(t, before);
    expect(both.map((e) => e.data.name)).toEqual(['First statement', 'Second statement']);
    expect(idPlace(both[0].id)!.position).toBe(idPlace(both[1].id)!.position);
    expect(Number(idPlace(both[1].id)!.seq)).toBeGreaterThan(Number(idPlace(both[0].id)!.seq));
  });

  it("a membership's events keep it as it was: created and changed in one transaction is one event; a later change of its member does not show", async () => {
    // Stored typed, its JSON built when read (docs/events.md): what is read
    // must be the membership at the event, not now.
    const sql = sqlWith(app);
    const group = await post('/groups', { name: 'Snapshots' });
    const member = await post('/members', { externalId: 'snap-before' });
    const before = await feed();
    const id = '0b5e8d2c-7c1a-4f0e-9a3b-5d6e7f809112';
    await sql(
      `do $$ begin
         insert into group_memberships (id, community_id, group_id, member_id, title, order_number, created_at, modified_at)
           values ('${id}', '${t.communityId}', '${group.id}', '${member.id}', 'First', 1, now(), now());
         update group_memberships set title = 'Second', role = 'ADMIN' where id = '${id}';
       end $$`,
      [],
    );
    const read = (await app.http.get(`/api/v1/groups/${group.id}/memberships/${id}`).set(auth(t))).body;
    expect(read).toMatchObject({ title: 'Second', role: 'ADMIN', memberExternalId: 'snap-before' });
    const [created, ...rest] = await newEvents(t, before);
    expect(rest).toEqual([]);
    expect(created.type).toBe('group_membership.created');
    expect(created.data).toEqual({ ...read, groupId: group.id });

    expect((await app.http.patch(`/api/v1/members/${member.id}`).set(auth(t)).send({ externalId: 'snap-after' })).status).toBe(204);
    expect((await app.http.patch(`/api/v1/groups/${group.id}/memberships/${id}`).set(auth(t)).send({ title: 'Third' })).status).toBe(204);
    const later = await newEvents(t, before);
    expect(later.map((e) => e.type)).toEqual(['group_membership.created', 'member.updated', 'group_membership.updated']);
    expect(later[0].data).toEqual(created.data);
    expect(later[2].data).toMatchObject({ title: 'Third', memberExternalId: 'snap-after' });
    expect(later[2].changes).toEqual(['title']);
  });

  it('GraphQL writes and additional field values are events too; a member created with values is one event', async () => {
    const gql = gqlWith(app);
    const before = await feed();
    const res = await gql('mutation { createGroup(input: { name: "From GraphQL" }) { id } }', {}, t.key);
    expect(res.errors).toBeUndefined();
    const field = await post('/additional_fields', { name: 'Phone', type: 'TEXT', icon: { style: 'REGULAR', unicode: 'f095' } });
    const member = await post('/members', { firstName: 'Bo', additionalFields: [{ id: field.id, value: '123' }] });
    const patch = await app.http.patch(`/api/v1/members/${member.id}`).set(auth(t)).send({ additionalFields: [{ id: field.id, value: '456' }] });
    expect(patch.status).toBe(204);
    const events = await newEvents(t, before);
    expect(events.map((e) => e.type)).toEqual(['group.created', 'additional_field.created', 'member.created', 'member.updated']);
    expect(events[0].data.id).toBe(res.data.createGroup.id);
    expect(events[1].data).toEqual((await app.http.get(`/api/v1/additional_fields/${field.id}`).set(auth(t))).body);
    expect(events[1].data.icon).toEqual({ style: 'REGULAR', unicode: 'f095' });
    // changes name REST fields: two columns of one field are one name, words are camelCased
    const fieldPatch = await app.http.patch(`/api/v1/additional_fields/${field.id}`).set(auth(t)).send({ icon: { style: 'SOLID', unicode: 'f095' }, isVisibleInApp: false });
    expect(fieldPatch.status, JSON.stringify(fieldPatch.body)).toBe(204);
    const [fieldUpdated] = await newEvents(t, events);
    expect(fieldUpdated).toMatchObject({ type: 'additional_field.updated', changes: ['icon', 'isVisibleInApp'] });
    expect(events[2].data.additionalFields).toEqual([{ id: field.id, value: '123' }]);
    expect(events[3].changes).toContain('additionalFields');
    expect(events[3].data).toEqual((await app.http.get(`/api/v1/members/${member.id}`).set(auth(t))).body);
  });

  it('notification sent and import finished, written by background jobs, are events', async () => {
    const before = await feed();
    const member = await post('/members', { externalId: 'reader' });
    await post('/notifications', { title: 'Hi', message: 'Hello', memberIds: [member.id] });
    const imp = await app.http.post('/api/v1/triggers/groups/import').set(auth(t)).send({ groups: [{ externalId: 'imp-1', name: 'Imported' }] });
    expect(imp.status, JSON.stringify(imp.body)).toBe(202);
    let types: string[] = [];
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(100)) {
      types = (await newEvents(t, before)).map((e) => e.type);
      if (types.includes('notification.sent') && types.includes('import_job.completed')) break;
    }
    expect(types).toEqual(expect.arrayContaining(['member.created', 'notification.created', 'notification.sent', 'import_job.created', 'group.created', 'import_job.completed']));
    expect(types.indexOf('import_job.created')).toBeLessThan(types.indexOf('group.created'));
    expect(types.indexOf('group.created')).toBeLessThan(types.indexOf('import_job.completed'));
    const events = await newEvents(t, before);
    const sent = events.find((e) => e.type === 'notification.sent')!;
    // (no route reads a notification back: its data is checked field by field)
    expect(sent.data).toMatchObject({ id: expect.any(String), title: 'Hi', message: 'Hello', status: 'SENT', receiversCount: 1, cancelledAt: null });
    expect(sent.data.sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // an import job's data is its record as REST reads it (the REST answer names more)
    const done = events.find((e) => e.type === 'import_job.completed')!;
    expect(done.data).toMatchObject({ id: imp.body.id, kind: expect.any(String), status: 'COMPLETED', total: 1, created: 1 });
    expect((await app.http.get(`/api/v1/import_jobs/${imp.body.id}`).set(auth(t))).body).toMatchObject(done.data);
  });
});

describe('the feed', () => {
  it('pages with after and limit, keeps other parameters in _links.next, and filters by types', async () => {
    const other = await app.tenant();
    for (let i = 0; i < 5; i++) await post('/groups', { name: `G${i}` }, other);
    await post('/members', { firstName: 'X' }, other);
    const first = await app.http.get('/api/v1/events?limit=2&types=group.created').set(auth(other));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ limit: 2, size: 2 });
    expect(first.body.results.map((e: Ev) => e.data.name)).toEqual(['G0', 'G1']);
    const next = first.body._links.next as string;
    expect(next).toContain(`after=${first.body.results[1].id}`);
    expect(next).toContain('types=group.created');
    expect(next).not.toContain('api_key');
    const all = await feed(other, '&types=group.created,member.created');
    expect(all.map((e) => e.type)).toEqual([...Array(5).fill('group.created'), 'member.created']);
    const last = await app.http.get(`/api/v1/events?after=${all[5].id}`).set(auth(other));
    expect(last.body).toMatchObject({ results: [], size: 0 });
    expect(last.body._links.next).toBeUndefined();
  });

  it('bad parameters are 400 naming the parameter; an after past retention is 410', async () => {
    expectProblem(await app.http.get('/api/v1/events?types=group.exploded').set(auth(t)), 400, '#/query/types');
    expectProblem(await app.http.get('/api/v1/events?limit=0').set(auth(t)), 400, '#/query/limit');
    expectProblem(await app.http.get('/api/v1/events?after=nope').set(auth(t)), 400, '#/query/after');
    // an event id of another community names nothing here
    const other = await app.tenant();
    await post('/groups', { name: 'Theirs' }, other);
    const theirs = await feed(other);
    expectProblem(await app.http.get(`/api/v1/events?after=${theirs[0].id}`).set(auth(t)), 400, '#/query/after');
    // an id made 40 days ago (purged): 410
    const old = (Date.now() - 40 * 86_400_000).toString(16).padStart(12, '0');
    const purged = `${old.slice(0, 8)}-${old.slice(8)}-7000-8000-000000000000`;
    expectProblem(await app.http.get(`/api/v1/events?after=${purged}`).set(auth(t)), 410, '#/query/after');
    // an event past retention that the purge has not reached yet: 410 as well
    const sql = sqlWith(app);
    const { idPlace } = await import('../../../src/modules/events/event.service');
    await sql("update event_commits set committed_at = now() - interval '31 days' where position = ?", [idPlace(theirs[0].id)!.position]);
    expectProblem(await app.http.get(`/api/v1/events?after=${theirs[0].id}`).set(auth(other)), 410, '#/query/after');
  });

  it('needs events:read, and shows only the resources the key may read', async () => {
    const tenant = await app.tenant();
    await post('/groups', { name: 'Visible' }, tenant);
    await post('/members', { firstName: 'Hidden' }, tenant);
    const noEvents = await keyFor(app, tenant.communityId, ['groups']);
    expectProblem(await app.http.get('/api/v1/events').set('X-API-Key', noEvents), 403);
    const groupsOnly = await keyFor(app, tenant.communityId, ['events:read', 'groups:read']);
    const res = await app.http.get('/api/v1/events').set('X-API-Key', groupsOnly);
    expect(res.body.results.map((e: Ev) => e.type)).toEqual(['group.created']);
  });

  it('the scheduled purge drops events past retention', async () => {
    const tenant = await app.tenant();
    await post('/groups', { name: 'Old' }, tenant);
    const ev = (await feed(tenant)).at(-1)!; // the group's event, after the key's api_key.created
    const sql = sqlWith(app);
    const { idPlace, purgeEvents } = await import('../../../src/modules/events/event.service');
    const { position } = idPlace(ev.id)!;
    // every commit up to this one is made past retention (commit times follow positions)
    await sql("update event_commits set committed_at = now() - interval '31 days' where position <= ?", [position]);
    const [kept] = await feed(tenant);
    expect(await asTestOwner(() => purgeEvents(app.runtime.orm.em.fork() as never))).toBeGreaterThanOrEqual(1);
    expect(await sql('select count(*)::int as n from event_commits where position <= ?', [position])).toEqual([{ n: 0 }]);
    expect(await sql("select count(*)::int as n from events where community_id = ?", [tenant.communityId])).toEqual([{ n: 0 }]);
    // an after that names a purged event is 410
    expectProblem(await app.http.get(`/api/v1/events?after=${ev.id}`).set(auth(tenant)), 410, '#/query/after');
    expect(kept).toBeUndefined(); // past retention, the feed already skipped it
    const jobs = await sql("select count(*)::int as n from graphile_worker._private_known_crontabs where identifier = 'events:purge'", []);
    expect(jobs[0].n).toBe(1);
  });
});
