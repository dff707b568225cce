import { EXPECTED_VERSION } from '../../db/version';
import { Arg, Args, Authorized, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { RecordRef } from '../../common/ref';
import { Community, type Context } from '../../context';
import { notFound } from '../../errors/app-error';
import { AdditionalField } from '../additional-fields/additional-field.entity';
import { Member, MemberFieldValueView } from './member.entity';
import { CreateMemberInput, CreateMembersInput, MemberListArgs, UpdateMemberInput } from './member.inputs';
import { MemberService } from './member.service';
import { memberFieldValues } from './member.loaders';
import { additionalFieldById } from '../additional-fields/additional-field.loaders';
import type { Parent } from '../../graphql/parent';

export const MemberPage = pageOf(Member, 'Member');

@Resolver(() => Member)
export class MemberResolver {
  @Authorized('members:read')
  @Query(() => MemberPage, { description: 'Members of the caller\'s community, one page.' })
  members(@Args(() => MemberListArgs) args: MemberListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(MemberService).list(communityId, args);
  }

  @Authorized('members:read')
  @Query(() => Member, { description: 'One member by id or externalId; NOT_FOUND when missing.' })
  member(@Arg('ref', () => RecordRef) ref: RecordRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(MemberService).read(communityId, ref);
  }

  @Authorized('members:write')
  @Mutation(() => Member)
  createMember(@Arg('input', () => CreateMemberInput) input: CreateMemberInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(MemberService).create(communityId, input);
  }

  @Authorized('members:write')
  @Mutation(() => [Member], { description: '1-1000 members in one transaction; the answer keeps the input order.' })
  createMembers(@Arg('input', () => CreateMembersInput) input: CreateMembersInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(MemberService).createMany(communityId, input);
  }

  @Authorized('members:write')
  @Mutation(() => Member)
  updateMember(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Arg('input', () => UpdateMemberInput) input: UpdateMemberInput,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(MemberService).update(communityId, ref, input, expectedVersion);
  }

  @Authorized('members:write')
  @Mutation(() => Boolean, { description: 'Deletes the member, its additional field values and its memberships.' })
  deleteMember(
    @Arg('ref', () => RecordRef) ref: RecordRef,
    @Community() communityId: string, @Ctx() ctx: Context,
    @Arg('expectedVersion', () => String, { nullable: true, description: EXPECTED_VERSION }) expectedVersion?: string | null,
  ) {
    return ctx.service(MemberService).remove(communityId, ref, expectedVersion);
  }

  @FieldResolver(() => [MemberFieldValueView], { description: 'Values ordered like the fields (orderNumber).' })
  additionalFields(@Root() member: Parent<Member>, @Ctx() ctx: Context) {
    return ctx.loaders.get(memberFieldValues).load(member.id);
  }
}

@Resolver(() => MemberFieldValueView)
export class MemberFieldValueResolver {
  @FieldResolver(() => AdditionalField)
  async field(@Root() value: Parent<MemberFieldValueView>, @Ctx() ctx: Context): Promise<AdditionalField> {
    const field = await ctx.loaders.get(additionalFieldById).load(value.id);
    if (!field) throw notFound('Additional field');
    return field;
  }
}
