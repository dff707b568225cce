import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { createGroup, createGroups, createMembers, createMembershipRows, keyFor } from '../../helpers/factories';
import { withSqlCount } from '../../helpers/sql-count';

let app: TestApp;
let t: Tenant;
let other: Tenant;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  other = await app.tenant();
});
afterAll(() => app.close());

async function gql(query: string, variables: Record<string, unknown> = {}, key = t.key) {
  const res = await app.http.post('/graphql').set('X-API-Key', key).send({ query, variables });
  return res.body as { data?: any; errors?: { message: string; path?: string[]; extensions: any }[] };
}

const FIELDS = 'id externalId memberId memberExternalId title orderNumber role createdAt modifiedAt';

describe('GraphQL group memberships', () => {
  it('creates, reads, updates, reorders and deletes through typed operations', async () => {
    const group = await createGroup(app, t.communityId);
    const [a, b] = await createMembers(app, t.communityId, [{}, {}]);
    const groupRef = { externalId: group.externalId };
    const created = await gql(
      `mutation($g: RecordRef!, $i: CreateGroupMembershipInput!) { createGroupMembership(groupRef: $g, input: $i) { ${FIELDS} } }`,
      { g: groupRef, i: { memberExternalId: a.externalId, externalId: 'g-a', title: 'Lead' } },
    );
    expect(created.data.createGroupMembership).toMatchObject({ memberId: a.id, memberExternalId: a.externalId, orderNumber: 1, role: 'MEMBER' });
    const many = await gql(
      `mutation($g: RecordRef!, $i: CreateGroupMembershipsInput!) { createGroupMemberships(groupRef: $g, input: $i) { id orderNumber memberExternalId } }`,
      { g: groupRef, i: { groupMemberships: [{ memberId: b.id, externalId: 'g-b' }] } },
    );
    expect(many.data.createGroupMemberships).toEqual([{ id: expect.any(String), orderNumber: 2, memberExternalId: b.externalId }]);
    const reordered = await gql(
      `mutation($g: RecordRef!, $i: GroupMembershipsOrderInput!) {
        reorderGroupMemberships(groupRef: $g, input: $i) { id membershipCount memberships(sort: [{ field: orderNumber }]) { results { externalId orderNumber } } }
      }`,
      { g: groupRef, i: { order: [{ externalId: 'g-b' }, { externalId: 'g-a' }] } },
    );
    expect(reordered.data.reorderGroupMemberships).toEqual({
      id: group.id,
      membershipCount: 2,
      memberships: { results: [{ externalId: 'g-b', orderNumber: 1 }, { externalId: 'g-a', orderNumber: 2 }] },
    });
    const updated = await gql(
      `mutation($g: RecordRef!) { updateGroupMembership(groupRef: $g, ref: { externalId: "g-a" }, input: { title: "Chair" }) { title } }`,
      { g: groupRef },
    );
    expect(updated.data.updateGroupMembership.title).toBe('Chair');
    const one = await gql(`query($g: RecordRef!) { groupMembership(groupRef: $g, ref: { externalId: "g-a" }) { title group { id } member { id } } }`, { g: groupRef });
    expect(one.data.groupMembership).toEqual({ title: 'Chair', group: { id: group.id }, member: { id: a.id } });
    const list = await gql(
      `query($g: RecordRef!) { groupMemberships(groupRef: $g, limit: 1, sort: [{ field: createdAt, direction: DESC }]) { results { externalId } size hasNextPage } }`,
      { g: groupRef },
    );
    expect(list.data.groupMemberships).toEqual({ results: [{ externalId: 'g-b' }], size: 1, hasNextPage: true });
    const deleted = await gql(`mutation($g: RecordRef!) { deleteGroupMembership(groupRef: $g, ref: { externalId: "g-b" }) }`, { g: groupRef });
    expect(deleted.data.deleteGroupMembership).toBe(true);
  });

  it('sets the service-assigned role through GraphQL only; REST shows it and refuses it as input', async () => {
    const group = await createGroup(app, t.communityId);
    const [m] = await createMembers(app, t.communityId, [{}]);
    const created = await app.http.post(`/api/v1/groups/${group.id}/memberships`).set('X-API-Key', t.key).send({ memberId: m.id });
    const set = await gql(
      `mutation($g: RecordRef!, $id: ID) { setGroupMembershipRole(groupRef: $g, ref: { id: $id }, role: ADMIN) { role } }`,
      { g: { id: group.id }, id: created.body.id },
    );
    expect(set.data.setGroupMembershipRole.role).toBe('ADMIN');
    const rest = await app.http.get(`/api/v1/groups/${group.id}/memberships/${created.body.id}`).set('X-API-Key', t.key);
    expect(rest.body.role).toBe('ADMIN');
    const refused = await app.http.patch(`/api/v1/groups/${group.id}/memberships/${created.body.id}`).set('X-API-Key', t.key).send({ role: 'MEMBER' });
    expect(refused.status).toBe(400);
    const reader = await keyFor(app, t.communityId, ['group_memberships:read']);
    const denied = await gql(
      `mutation($g: RecordRef!, $id: ID) { setGroupMembershipRole(groupRef: $g, ref: { id: $id }, role: MEMBER) { role } }`,
      { g: { id: group.id }, id: created.body.id },
      reader,
    );
    expect(denied.errors?.[0].extensions.code).toBe('FORBIDDEN');
  });

  it('reports issues with GraphQL paths that the REST facade turns into pointers', async () => {
    const group = await createGroup(app, t.communityId);
    const ms = await createMembers(app, t.communityId, [{}, {}, {}]);
    const res = await gql(
      `mutation($g: RecordRef!, $i: CreateGroupMembershipsInput!) { createGroupMemberships(groupRef: $g, input: $i) { id } }`,
      { g: { id: group.id }, i: { groupMemberships: [...ms.map((m) => ({ memberId: m.id })), { memberId: '3f1d7c1e-0000-4000-8000-000000000000' }] } },
    );
    expect(res.errors![0].extensions.code).toBe('VALIDATION');
    expect(res.errors![0].extensions.errors).toEqual([{ path: ['input', 'groupMemberships', 3, 'memberId'], detail: expect.any(String) }]);
    const badLimit = await gql(`{ groupMemberships(groupRef: { id: "${group.id}" }, limit: 0) { size } }`, {}, other.key);
    expect(badLimit.errors![0].extensions.code).toBe('VALIDATION');
    const foreign = await gql(`{ groupMemberships(groupRef: { id: "${group.id}" }) { size } }`, {}, other.key);
    expect(foreign.errors![0].extensions.code).toBe('NOT_FOUND');
  });

  it('Group.memberships pages every group of a page on its own; Member.memberships lists across groups', async () => {
    const fresh = await app.tenant();
    const groups = await createGroups(app, fresh.communityId, 3);
    const ms = await createMembers(app, fresh.communityId, [{}, {}, {}, {}]);
    await createMembershipRows(app, groups[0], ms);
    await createMembershipRows(app, groups[1], ms.slice(0, 2));
    const res = await gql(
      `{ groups(limit: 3) { results { id memberships(limit: 2, skip: 1, sort: [{ field: orderNumber, direction: ASC }]) {
          results { orderNumber member { id memberships { results { group { id } } } } } size skip hasNextPage } } } }`,
      {},
      fresh.key,
    );
    expect(res.errors).toBeUndefined();
    const byGroup = new Map(res.data.groups.results.map((g: any) => [g.id, g.memberships]));
    const pages: any[] = groups.map((g) => byGroup.get(g.id)); // same createdAt: the page order is by id
    expect(pages.map((p: any) => [p.results.map((r: any) => r.orderNumber), p.size, p.hasNextPage])).toEqual([
      [[2, 3], 2, true],
      [[2], 1, false],
      [[], 0, false],
    ]);
    const second = pages[0].results[0].member; // ms[1]: in groups 0 and 1
    expect(second.id).toBe(ms[1].id);
    expect(second.memberships.results.map((r: any) => r.group.id).sort()).toEqual([groups[0].id, groups[1].id].sort());
  });

  it('each relation asks for its own scope', async () => {
    const group = await createGroup(app, t.communityId);
    await createMembershipRows(app, group, await createMembers(app, t.communityId, [{}]));
    const groupsOnly = await keyFor(app, t.communityId, ['groups']);
    const viaGroups = await gql(`{ group(ref: { id: "${group.id}" }) { id memberships { size } } }`, {}, groupsOnly);
    expect(viaGroups.errors![0]).toMatchObject({ path: ['group', 'memberships'], extensions: { code: 'FORBIDDEN' } });
    const membershipsOnly = await keyFor(app, t.communityId, ['group_memberships']);
    const root = await gql(`{ groupMemberships(groupRef: { id: "${group.id}" }) { results { id memberExternalId } } }`, {}, membershipsOnly);
    expect(root.errors).toBeUndefined();
    const nested = await gql(`{ groupMemberships(groupRef: { id: "${group.id}" }) { results { group { id } } } }`, {}, membershipsOnly);
    expect(nested.errors![0].extensions.code).toBe('FORBIDDEN');
    const write = await gql(`mutation { deleteGroupMembership(groupRef: { id: "${group.id}" }, ref: { id: "${root.data.groupMemberships.results[0].id}" }) }`, {}, groupsOnly);
    expect(write.errors![0].extensions.code).toBe('FORBIDDEN');
  });
});

describe('query count (DataLoaders, no N+1)', () => {
  it('a page of 100 groups with memberships and members costs as many statements as a page of 5', async () => {
    const fresh = await app.tenant();
    const groups = await createGroups(app, fresh.communityId, 100);
    const ms = await createMembers(app, fresh.communityId, [{}, {}, {}]);
    for (const group of groups) await createMembershipRows(app, group, ms);
    const query = `query($limit: Int) { groups(limit: $limit) { results { id
      memberships(limit: 10, sort: [{ field: orderNumber }]) { results { id memberExternalId member { id externalId } group { id } } }
    } } }`;
    const run = (limit: number) =>
      withSqlCount(app.runtime, () => app.http.post('/graphql').set('X-API-Key', fresh.key).send({ query, variables: { limit } }));
    await run(1); // warm-up: key lookups and caches outside the measured requests
    const small = await run(5);
    const large = await run(100);
    for (const r of [small, large]) expect(r.result.body.errors).toBeUndefined();
    expect(large.result.body.data.groups.results).toHaveLength(100);
    expect(large.result.body.data.groups.results[99].memberships.results[2].memberExternalId).toBe(ms[2].externalId);
    expect(large.orm).toBe(small.orm);
    // groups page, memberships of all groups (one window query), members; Group is primed.
    expect(large.orm, large.statements.map((s) => s.sql).join('\n')).toBeLessThanOrEqual(3);
  });

  it('a REST list of 100 memberships reads memberExternalId with the page itself', async () => {
    const fresh = await app.tenant();
    const group = await createGroup(app, fresh.communityId);
    await createMembershipRows(app, group, await createMembers(app, fresh.communityId, Array.from({ length: 100 }, () => ({}))));
    const list = (limit: number) =>
      withSqlCount(app.runtime, () => app.http.get(`/api/v1/groups/${group.id}/memberships?limit=${limit}`).set('X-API-Key', fresh.key));
    await list(1);
    const small = await list(2);
    const large = await list(100);
    expect(large.result.body.size).toBe(100);
    expect(large.orm).toBe(small.orm);
    expect(large.orm).toBe(1); // the group, its page and the members' externalId: one statement
    expect(large.result.body.results.every((m: { memberExternalId: string }) => m.memberExternalId)).toBe(true);
  });
});
