import { transaction } from '../../db/transaction';
import { assertVersion } from '../../db/version';
import { leanChildPage, leanFindOne, leanPage, type LeanExtra } from '../../db/lean';
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page } from '../../common/pagination';
import { refWhere, type RecordRef } from '../../common/ref';
import { mapUnique } from '../../common/unique';
import { bulkSizeIssues, rejectInvalid, under } from '../../common/validate';
import { notFound, orNotFound } from '../../errors/app-error';
import { Group } from '../groups/group.entity';
import { findGroup, inLockedGroup } from './group-lock';
import { insertMemberships, membershipIssues } from './membership.create';
import { GroupMembership, MembershipRole } from './membership.entity';
import type {
  CreateGroupMembershipInput,
  CreateGroupMembershipsInput,
  GroupMembershipListArgs,
  GroupMembershipsOrderInput,
  UpdateGroupMembershipInput,
} from './membership.inputs';
import { reorder } from './membership.order';

const MEMBER_EXTERNAL_ID: LeanExtra = {
  select: '(select mem.external_id from members mem where mem.id = p."memberId") as "memberExternalId"',
};

/** Backstop for writers that bypass the pre-checks; the pre-checks give the precise pointers. */
const UNIQUE = {
  group_memberships_group_member_unique: { path: ['input', 'memberId'], detail: 'the member already belongs to this group' },
  group_memberships_group_external_id_unique: { path: ['input', 'externalId'], detail: 'externalId is already used by another membership of this group' },
};

/** Memberships of one group. Every method takes the caller's community first and the group's ref. */
export class GroupMembershipService {
  constructor(private readonly em: EntityManager) {}

  async list(communityId: string, groupRef: RecordRef, args: GroupMembershipListArgs): Promise<Page<GroupMembership>> {
    const window = pageWindow(args); // bad arguments are a 400 before any lookup
    const where = refWhere(groupRef, 'groupRef');
    if (where && 'id' in where) {
      // By id: the group's existence is checked in the page's own statement (one round trip).
      const page = await leanChildPage(this.em, GroupMembership, communityId, { entity: Group, id: where.id, via: 'groupId' }, window, MEMBER_EXTERNAL_ID);
      if (!page) throw notFound('Group');
      return page;
    }
    const group = await findGroup(this.em, communityId, groupRef);
    // The member's externalId comes with the page: no per-row lookup for memberExternalId.
    return leanPage(this.em, GroupMembership, { communityId, groupId: group.id }, window, MEMBER_EXTERNAL_ID);
  }

  /** For output: a plain row of the group's membership (404 for a group or membership the community does not have). */
  async read(communityId: string, groupRef: RecordRef, ref: RecordRef): Promise<GroupMembership> {
    const group = await findGroup(this.em, communityId, groupRef);
    const where = refWhere(ref);
    return orNotFound(where && (await leanFindOne(this.em, GroupMembership, { ...where, groupId: group.id, communityId })), 'Group membership');
  }

  /** The entity, to change it (no lock), in em (the caller's transaction when given). */
  async find(communityId: string, groupRef: RecordRef, ref: RecordRef, em = this.em): Promise<GroupMembership> {
    const group = await findGroup(em, communityId, groupRef);
    const where = refWhere(ref);
    return orNotFound(where && (await em.findOne(GroupMembership, { ...where, groupId: group.id, communityId })), 'Group membership');
  }

  async create(communityId: string, groupRef: RecordRef, input: CreateGroupMembershipInput): Promise<GroupMembership> {
    const [created] = await mapUnique(
      () => inLockedGroup(this.em, communityId, groupRef, (tem, group) => insertMemberships(tem, group, [input], () => ['input'])),
      UNIQUE,
    );
    return created;
  }

  /** All or nothing: one transaction, one INSERT; any bad item fails the whole batch. */
  async createMany(communityId: string, groupRef: RecordRef, input: CreateGroupMembershipsInput): Promise<GroupMembership[]> {
    const items = input.groupMemberships;
    rejectInvalid(bulkSizeIssues(['input', 'groupMemberships'], items.length));
    return mapUnique(
      () =>
        inLockedGroup(this.em, communityId, groupRef, (tem, group) =>
          insertMemberships(tem, group, items, (i) => ['input', 'groupMemberships', i]),
        ),
      { ...UNIQUE, group_memberships_group_member_unique: { ...UNIQUE.group_memberships_group_member_unique, path: ['input', 'groupMemberships'] } },
    );
  }

  async update(
    communityId: string,
    groupRef: RecordRef,
    ref: RecordRef,
    input: UpdateGroupMembershipInput,
    expectedVersion?: string | null,
  ): Promise<GroupMembership> {
    rejectInvalid(under(['input'], membershipIssues(input)));
    // One transaction: the If-Match check locks the row until the write is committed.
    return transaction(this.em, async (em) => {
      const membership = await this.find(communityId, groupRef, ref, em);
      await assertVersion(em, 'group_memberships', membership.id, expectedVersion);
      // PATCH: absent fields stay; MikroORM writes only what changed and then sets modifiedAt.
      wrap(membership).assign(input, { ignoreUndefined: true });
      await mapUnique(() => em.flush(), UNIQUE);
      return membership;
    });
  }

  /** The role is service-assigned: never REST input, only this operation (GraphQL). */
  async setRole(communityId: string, groupRef: RecordRef, ref: RecordRef, role: MembershipRole): Promise<GroupMembership> {
    const membership = await this.find(communityId, groupRef, ref);
    membership.role = role;
    await this.em.flush(); // a write (and a new modifiedAt) only when the role changes
    return membership;
  }

  /** Under the group lock, so a delete never interleaves with a reorder of the same group. */
  async remove(communityId: string, groupRef: RecordRef, ref: RecordRef, expectedVersion?: string | null): Promise<boolean> {
    const where = refWhere(ref);
    const deleted = await inLockedGroup(this.em, communityId, groupRef, async (tem, group) => {
      if (!where) return 0;
      if (expectedVersion != null) {
        const found = await tem.findOne(GroupMembership, { ...where, groupId: group.id, communityId }, { fields: ['id'] });
        if (!found) return 0;
        await assertVersion(tem, 'group_memberships', found.id, expectedVersion);
      }
      return tem.nativeDelete(GroupMembership, { ...where, groupId: group.id, communityId });
    });
    if (!deleted) throw notFound('Group membership');
    return true;
  }

  async reorder(communityId: string, groupRef: RecordRef, input: GroupMembershipsOrderInput): Promise<Group> {
    return inLockedGroup(this.em, communityId, groupRef, async (tem, group) => {
      await reorder(tem, group, input);
      return group;
    });
  }
}
