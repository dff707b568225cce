import { Args, Authorized, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../../context';
import { Group } from '../groups/group.entity';
import { Member } from '../members/member.entity';
import { groupById } from '../groups/group.loaders';
import { memberById } from '../members/member.loaders';
import { GroupMembership } from './membership.entity';
import { groupMembershipPages, memberMembershipPages } from './membership.loaders';
import { GroupMembershipListArgs } from './membership.inputs';
import { GroupMembershipPage } from './membership.resolver';
import type { Parent } from '../../graphql/parent';

/**
 * Relations, all through the per-request loaders (ctx.loaders): a page of N parents
 * costs one query per relation level, whatever N is. Each relation asks for the scope
 * of the records it reveals.
 */
@Resolver(() => GroupMembership)
export class GroupMembershipRelations {
  @FieldResolver(() => String, { nullable: true, description: 'externalId of the member.' })
  async memberExternalId(@Root() m: GroupMembership & { memberExternalId?: string | null }, @Ctx() ctx: Context): Promise<string | null> {
    if (m.memberExternalId !== undefined) return m.memberExternalId; // read with the page
    return (await ctx.loaders.get(memberById).load(m.memberId))?.externalId ?? null;
  }

  @Authorized('members:read')
  @FieldResolver(() => Member, { nullable: true, description: 'Null only while the member is being deleted.' })
  async member(@Root() m: Parent<GroupMembership>, @Ctx() ctx: Context): Promise<Member | null> {
    return (await ctx.loaders.get(memberById).load(m.memberId)) ?? null;
  }

  @Authorized('groups:read')
  @FieldResolver(() => Group, { nullable: true, description: 'Null only while the group is being deleted.' })
  async group(@Root() m: Parent<GroupMembership>, @Ctx() ctx: Context): Promise<Group | null> {
    return (await ctx.loaders.get(groupById).load(m.groupId)) ?? null;
  }
}

@Resolver(() => Group)
export class GroupMembershipsField {
  @Authorized('group_memberships:read')
  @FieldResolver(() => GroupMembershipPage, { description: 'The group\'s memberships, one page (default order: createdAt).' })
  memberships(@Root() group: Parent<Group>, @Args(() => GroupMembershipListArgs) args: GroupMembershipListArgs, @Ctx() ctx: Context) {
    ctx.loaders.get(groupById).prime(group.id, group); // GroupMembership.group below needs no query
    return ctx.loaders.get(groupMembershipPages)(args).load(group.id);
  }
}

@Resolver(() => Member)
export class MemberMembershipsField {
  @Authorized('group_memberships:read')
  @FieldResolver(() => GroupMembershipPage, { description: 'The member\'s memberships across groups, one page.' })
  memberships(@Root() member: Parent<Member>, @Args(() => GroupMembershipListArgs) args: GroupMembershipListArgs, @Ctx() ctx: Context) {
    ctx.loaders.get(memberById).prime(member.id, member);
    return ctx.loaders.get(memberMembershipPages)(args).load(member.id);
  }
}
