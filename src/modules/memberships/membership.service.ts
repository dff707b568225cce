import { leanPage, type LeanJoin } from '../../db/lean';

import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page } from '../../common/pagination';
import { refWhere, type RecordRef } from '../../common/ref';
import { mapUnique } from '../../common/unique';
import { MEMBERSHIP } from '../../common/rules';
import { Checks } from '../../common/validate';
import { invalid, notFound } from '../../errors/app-error';
import type { Group } from '../groups/group.entity';
import { findGroup, inLockedGroup } from './group-lock';
import { insertMemberships, MAX_BULK } from './membership.create';
import { GroupMembership, MembershipRole } from './membership.entity';
import type {
  CreateGroupMembershipInput,
  CreateGroupMembershipsInput,
  GroupMembershipListArgs,
  GroupMembershipsOrderInput,
  UpdateGroupMembershipInput,
} from './membership.inputs';
import { reorder } from './membership.order';

const MEMBER_EXTERNAL_ID: LeanJoin = {
  select: 'mem.external_id as "memberExternalId"',
  join: 'join members mem on mem.id = t.member_id',
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
    const group = await findGroup(this.em, communityId, groupRef);
    // The member's externalId comes with the page: no per-row lookup for memberExternalId.
    return leanPage(this.em, GroupMembership, { communityId, groupId: group.id }, window, MEMBER_EXTERNAL_ID);
  }

  private async find(group: Group, ref: RecordRef): Promise<GroupMembership> {
    const where = refWhere(ref);
    const found = where ? await this.em.findOne(GroupMembership, { ...where, groupId: group.id, communityId: group.communityId }) : null;
    if (!found) throw notFound('Group membership');
    return found;
  }

  async get(communityId: string, groupRef: RecordRef, ref: RecordRef): Promise<GroupMembership> {
    return this.find(await findGroup(this.em, communityId, groupRef), ref);
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
    if (items.length < 1 || items.length > MAX_BULK) {
      throw invalid([{ path: ['input', 'groupMemberships'], detail: `groupMemberships must hold 1 to ${MAX_BULK} items` }]);
    }
    return mapUnique(
      () =>
        inLockedGroup(this.em, communityId, groupRef, (tem, group) =>
          insertMemberships(tem, group, items, (i) => ['input', 'groupMemberships', i]),
        ),
      { ...UNIQUE, group_memberships_group_member_unique: { ...UNIQUE.group_memberships_group_member_unique, path: ['input', 'groupMemberships'] } },
    );
  }

  async update(communityId: string, groupRef: RecordRef, ref: RecordRef, input: UpdateGroupMembershipInput): Promise<GroupMembership> {
    new Checks(['input'])
      .string('externalId', input.externalId, MEMBERSHIP.externalId)
      .string('title', input.title, MEMBERSHIP.title)
      .done();
    const membership = await this.get(communityId, groupRef, ref);
    let changed = false;
    for (const field of ['externalId', 'title'] as const) {
      const value = input[field];
      if (value !== undefined && membership[field] !== value) {
        membership[field] = value;
        changed = true;
      }
    }
    if (changed) {
      membership.modifiedAt = new Date();
      await mapUnique(() => this.em.flush(), UNIQUE);
    }
    return membership;
  }

  /** The role is service-assigned: never REST input, only this operation (GraphQL). */
  async setRole(communityId: string, groupRef: RecordRef, ref: RecordRef, role: MembershipRole): Promise<GroupMembership> {
    const membership = await this.get(communityId, groupRef, ref);
    if (membership.role !== role) {
      membership.role = role;
      membership.modifiedAt = new Date();
      await this.em.flush();
    }
    return membership;
  }

  /** Under the group lock, so a delete never interleaves with a reorder of the same group. */
  async remove(communityId: string, groupRef: RecordRef, ref: RecordRef): Promise<boolean> {
    const where = refWhere(ref);
    const deleted = await inLockedGroup(this.em, communityId, groupRef, (tem, group) =>
      where ? tem.nativeDelete(GroupMembership, { ...where, groupId: group.id, communityId }) : Promise.resolve(0),
    );
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
