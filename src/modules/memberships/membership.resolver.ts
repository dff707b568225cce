import { EXPECTED_VERSION } from '../../db/version';
import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { RecordRef } from '../../common/ref';
import { Community, type Context } from '../../context';
import { Group } from '../groups/group.entity';
import { GroupMembership, MembershipRole } from './membership.entity';
import {
  CreateGroupMembershipInput,
  CreateGroupMembershipsInput,
  GroupMembershipListArgs,
  GroupMembershipsOrderInput,
  UpdateGroupMembershipInput,
} from './membership.inputs';
import { GroupMembershipService } from './membership.service';

export const GroupMembershipPage = pageOf(GroupMembership, 'GroupMembership');

const groupRefArg = () => Arg('groupRef', () => RecordRef, { description: 'The group, by id or externalId.' });

/** Root fields; thin: rules live in GroupMembershipService. */
@Resolver(() => GroupMembership)
export class GroupMembershipResolver {
  @Authorized('group_memberships:read')
  @Query(() => GroupMembershipPage, { description: 'Memberships of one group, one page; NOT_FOUND when the group is missing.' })
  groupMemberships(@groupRefArg() groupRef: RecordRef, @Args(() => GroupMembershipListArgs) args: GroupMembershipListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupMembershipService).list(communityId, groupRef, args);
  }

  @Authorized('group_memberships:read')
  @Query(() => GroupMembership, { description: 'One membership of a group by id or externalId.' })
  groupMembership(@groupRefArg() groupRef: RecordRef, @Arg('ref', () => RecordRef) ref: RecordRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupMembershipService).read(communityId, groupRef, ref);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => GroupMembership, { description: 'Adds a member to a group, at the end of its order (role MEMBER).' })
  createGroupMembership(
    @groupRefArg() groupRef: RecordRef,
    @Arg('input', () => CreateGroupMembershipInput) input: CreateGroupMembershipInput,
    @Community() communityId: string, @Ctx() ctx: Context,
  ) {
    return ctx.service(GroupMembershipService).create(communityId, groupRef, input);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => [GroupMembership], { description: '1-1000 memberships, all or none; answered in input order.' })
  createGroupMemberships(
    @groupRefArg() groupRef: RecordRef,
    @Arg('input', () => CreateGroupMembershipsInput) input: CreateGroupMembershipsInput,
    @Community() communityId: string, @Ctx() ctx: Context,
  ) {
    return ctx.service(GroupMembershipService).createMany(communityId, groupRef, input);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => GroupMembership)
  updateGroupMembership(
    @groupRefArg() groupRef: RecordRef,
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Arg('input', () => UpdateGroupMembershipInput) input: UpdateGroupMembershipInput,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(GroupMembershipService).update(communityId, groupRef, ref, input, expectedVersion);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => GroupMembership, { description: 'Sets the service-assigned role (MEMBER or ADMIN); idempotent.' })
  setGroupMembershipRole(
    @groupRefArg() groupRef: RecordRef,
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Arg('role', () => MembershipRole) role: MembershipRole,
    @Community() communityId: string, @Ctx() ctx: Context,
  ) {
    return ctx.service(GroupMembershipService).setRole(communityId, groupRef, ref, role);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => Boolean)
  deleteGroupMembership(
    @groupRefArg() groupRef: RecordRef,
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(GroupMembershipService).remove(communityId, groupRef, ref, expectedVersion);
  }

  @Authorized('group_memberships:write')
  @Mutation(() => Group, { description: 'Sets orderNumber 1..n in the given order; the list must name every membership once.' })
  reorderGroupMemberships(
    @groupRefArg() groupRef: RecordRef,
    @Arg('input', () => GroupMembershipsOrderInput) input: GroupMembershipsOrderInput,
    @Community() communityId: string, @Ctx() ctx: Context,
  ) {
    return ctx.service(GroupMembershipService).reorder(communityId, groupRef, input);
  }
}
