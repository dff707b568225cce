import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { RecordRef } from '../../common/ref';
import { EXPECTED_VERSION } from '../../db/version';
import { Community, type Context } from '../../context';
import { Group, GroupState } from './group.entity';
import { CreateGroupInput, GroupListArgs, UpdateGroupInput } from './group.inputs';
import { GroupService } from './group.service';

export const GroupPage = pageOf(Group, 'Group');

@Resolver(() => Group)
export class GroupResolver {
  @Authorized('groups:read')
  @Query(() => GroupPage, { description: 'Groups of the caller\'s community, one page.' })
  groups(@Args(() => GroupListArgs) args: GroupListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupService).list(communityId, args);
  }

  @Authorized('groups:read')
  @Query(() => Group, { description: 'One group by id or externalId; NOT_FOUND when missing.' })
  group(@Arg('ref', () => RecordRef) ref: RecordRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupService).read(communityId, ref);
  }

  @Authorized('groups:write')
  @Mutation(() => Group)
  createGroup(@Arg('input', () => CreateGroupInput) input: CreateGroupInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupService).create(communityId, input);
  }

  @Authorized('groups:write')
  @Mutation(() => Group)
  updateGroup(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Arg('input', () => UpdateGroupInput) input: UpdateGroupInput,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(GroupService).update(communityId, ref, input, expectedVersion);
  }

  @Authorized('groups:write')
  @Mutation(() => Boolean, { description: 'Deletes the group and its memberships.' })
  deleteGroup(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(GroupService).remove(communityId, ref, expectedVersion);
  }

  @Authorized('groups:write')
  @Mutation(() => Group, { description: 'Sets state ARCHIVED (idempotent).' })
  archiveGroup(@Arg('ref', () => RecordRef) ref: RecordRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupService).setState(communityId, ref, GroupState.ARCHIVED);
  }

  @Authorized('groups:write')
  @Mutation(() => Group, { description: 'Sets state ORIGINAL again (idempotent).' })
  restoreGroup(@Arg('ref', () => RecordRef) ref: RecordRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(GroupService).setState(communityId, ref, GroupState.ORIGINAL);
  }
}
