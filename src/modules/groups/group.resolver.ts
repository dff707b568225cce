import { Arg, Args, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { RecordRef } from '../../common/ref';
import { EXPECTED_VERSION } from '../../db/version';
import { communityOf, type Context } from '../../context';
import { Group, GroupState } from './group.entity';
import { CreateGroupInput, GroupListArgs, UpdateGroupInput } from './group.inputs';
import { GroupService } from './group.service';

export const GroupPage = pageOf(Group, 'Group');

@Resolver(() => Group)
export class GroupResolver {
  @Authorized('groups:read')
  @Query(() => GroupPage, { description: 'Groups of the caller\'s community, one page.' })
  groups(@Args(() => GroupListArgs) args: GroupListArgs, @Ctx() ctx: Context) {
    return new GroupService(ctx.em).list(communityOf(ctx), args);
  }

  @Authorized('groups:read')
  @Query(() => Group, { description: 'One group by id or externalId; NOT_FOUND when missing.' })
  group(@Arg('ref', () => RecordRef) ref: RecordRef, @Ctx() ctx: Context) {
    return new GroupService(ctx.em).read(communityOf(ctx), ref);
  }

  @Authorized('groups:write')
  @Mutation(() => Group)
  createGroup(@Arg('input', () => CreateGroupInput) input: CreateGroupInput, @Ctx() ctx: Context) {
    return new GroupService(ctx.em).create(communityOf(ctx), input);
  }

  @Authorized('groups:write')
  @Mutation(() => Group)
  updateGroup(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Arg('input', () => UpdateGroupInput) input: UpdateGroupInput,
    @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return new GroupService(ctx.em).update(communityOf(ctx), ref, input, expectedVersion);
  }

  @Authorized('groups:write')
  @Mutation(() => Boolean, { description: 'Deletes the group and its memberships.' })
  deleteGroup(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return new GroupService(ctx.em).remove(communityOf(ctx), ref, expectedVersion);
  }

  @Authorized('groups:write')
  @Mutation(() => Group, { description: 'Sets state ARCHIVED (idempotent).' })
  archiveGroup(@Arg('ref', () => RecordRef) ref: RecordRef, @Ctx() ctx: Context) {
    return new GroupService(ctx.em).setState(communityOf(ctx), ref, GroupState.ARCHIVED);
  }

  @Authorized('groups:write')
  @Mutation(() => Group, { description: 'Sets state ORIGINAL again (idempotent).' })
  restoreGroup(@Arg('ref', () => RecordRef) ref: RecordRef, @Ctx() ctx: Context) {
    return new GroupService(ctx.em).setState(communityOf(ctx), ref, GroupState.ORIGINAL);
  }
}
