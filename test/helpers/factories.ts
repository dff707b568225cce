import type { EntityManager } from '@mikro-orm/postgresql';
import { Group } from '../../src/modules/groups/group.entity';
import { Member } from '../../src/modules/members/member.entity';
import { GroupMembership } from '../../src/modules/memberships/membership.entity';
import { inCommunity } from '../../src/db/tenancy';
import type { TestApp } from './app';
import { asTestOwner } from './owner';

/**
 * Rows written straight through the ORM (real database, no mocks), so tests of one
 * resource do not depend on another resource's routes.
 */
const fork = (app: TestApp) => app.runtime.orm.em.fork() as unknown as EntityManager;

let seq = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++seq}`;

export type MemberFields = Partial<Pick<Member, 'externalId' | 'firstName' | 'lastName' | 'emailAddress'>>;

export async function createMembers(app: TestApp, communityId: string, specs: MemberFields[]): Promise<Member[]> {
  return inCommunity(communityId, () => createMembersHere(app, communityId, specs));
}

async function createMembersHere(app: TestApp, communityId: string, specs: MemberFields[]): Promise<Member[]> {
  const em = fork(app);
  const members = specs.map((spec) =>
    em.create(Member, { communityId, externalId: unique('mem'), firstName: 'Ada', lastName: unique('L'), ...spec }),
  );
  await em.flush();
  return members;
}

export async function createMember(app: TestApp, communityId: string, spec: MemberFields = {}): Promise<Member> {
  return (await createMembers(app, communityId, [spec]))[0];
}

export async function createGroups(app: TestApp, communityId: string, count: number, spec: Partial<Pick<Group, 'externalId' | 'name'>> = {}): Promise<Group[]> {
  return inCommunity(communityId, async () => {
    const em = fork(app);
    const groups = Array.from({ length: count }, () =>
      em.create(Group, { communityId, name: unique('Group'), externalId: unique('grp'), ...spec }),
    );
    await em.flush();
    return groups;
  });
}

export async function createGroup(app: TestApp, communityId: string, spec: Partial<Pick<Group, 'externalId' | 'name'>> = {}): Promise<Group> {
  return (await createGroups(app, communityId, 1, spec))[0];
}

/** Membership rows for `members` in `group`, order numbers 1..n (count triggers keep membershipCount). */
export async function createMembershipRows(app: TestApp, group: Group, members: Member[]): Promise<GroupMembership[]> {
  return inCommunity(group.communityId, async () => {
    const em = fork(app);
    const rows = members.map((m, i) =>
      em.create(GroupMembership, { communityId: group.communityId, groupId: group.id, memberId: m.id, orderNumber: i + 1 }),
    );
    await em.flush();
    return rows;
  });
}

/** Deletes a member row; the database cascades to its memberships (and the count triggers run). */
export async function deleteMemberRow(app: TestApp, memberId: string): Promise<void> {
  await asTestOwner(() => fork(app).nativeDelete(Member, { id: memberId }));
}

/** Another key of an existing community, e.g. with fewer scopes. */
export async function keyFor(app: TestApp, communityId: string, scopes: string[]): Promise<string> {
  const data = await app.operator('mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }', {
    input: { communityId, scopes },
  });
  return data.createApiKey.key;
}

export { expectProblem } from './problem';
