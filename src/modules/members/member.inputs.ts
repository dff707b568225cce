import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { EXAMPLE_IDS, MAX_FIELD_FILTERS, MAX_SEARCH_TEXT, MEMBER, Rule, SEARCH } from '../../common/rules';

@InputType({ description: "A value for one of the community's additional fields." })
@Rule({ name: 'ApiMemberFieldValueInput' })
export class MemberFieldValueInput {
  @Field(() => ID, { description: 'The id of an additional field of the same community.' })
  @Rule({ kind: 'value', example: EXAMPLE_IDS.additionalField })
  id!: string;

  @Field(() => String, { nullable: true, description: 'At most 2048 characters. null: no value (on update: removes the value).' })
  @Rule(MEMBER.fieldValue)
  value?: string | null;
}

const IDENTITY = [['externalId'], ['firstName'], ['lastName'], ['emailAddress']];

@InputType({ description: 'A member for creation; at least one of externalId, firstName, lastName, emailAddress.' })
@Rule({ name: 'ApiMemberInput', anyOf: IDENTITY })
export class CreateMemberInput {
  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique in the community.' })
  @Rule(MEMBER.externalId)
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: '1-256 characters.' })
  @Rule(MEMBER.firstName)
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: '1-256 characters.' })
  @Rule(MEMBER.lastName)
  lastName?: string | null;

  @Field(() => String, { nullable: true, description: 'A valid address, unique in the community (case-insensitive).' })
  @Rule(MEMBER.emailAddress)
  emailAddress?: string | null;

  @Field(() => [MemberFieldValueInput], { nullable: true, description: 'Each additional field at most once; not null.' })
  @Rule(MEMBER.additionalFields)
  additionalFields?: MemberFieldValueInput[] | null;
}

@InputType({ description: 'Bulk creation: 1-1000 members, all or nothing.' })
@Rule({
  name: 'ApiMembersInput',
  example: {
    members: [
      { externalId: 'grace-hopper', firstName: 'Grace', lastName: 'Hopper', emailAddress: 'grace@example.com' },
      { externalId: 'alan-turing', firstName: 'Alan', lastName: 'Turing', emailAddress: 'alan@example.com' },
    ],
  },
})
export class CreateMembersInput {
  @Field(() => [CreateMemberInput])
  @Rule(MEMBER.bulk)
  members!: CreateMemberInput[];
}

@InputType({
  description: 'Only the given fields change. additionalFields: listed values are set (null removes one); unlisted values stay.',
})
@Rule({ name: 'ApiMemberPatchInput', example: { lastName: 'King' } })
export class UpdateMemberInput {
  @Field(() => String, { nullable: true, description: 'null removes it.' })
  @Rule(MEMBER.externalId)
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(MEMBER.firstName)
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(MEMBER.lastName)
  lastName?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(MEMBER.emailAddress)
  emailAddress?: string | null;

  @Field(() => [MemberFieldValueInput], { nullable: true, description: 'Not null.' })
  @Rule(MEMBER.additionalFields)
  additionalFields?: MemberFieldValueInput[] | null;
}

export enum MemberSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  lastName = 'lastName',
  firstName = 'firstName',
}

@InputType({ description: "An additional field's value a member must have (exact match)." })
@Rule({ name: 'ApiMemberFieldFilter' })
export class MemberFieldFilter {
  @Field(() => ID, { description: 'The id of one of the community\'s additional fields; another id is a BAD_USER_INPUT.' })
  @Rule({ kind: 'value', example: EXAMPLE_IDS.additionalField })
  id!: string;

  @Field(() => String, { description: 'The value, compared exactly (case and spaces count).' })
  @Rule(SEARCH.fieldValue)
  value!: string;
}

@InputType({ description: 'Finds members: every given filter must match.' })
@Rule({ name: 'ApiMemberFilter' })
export class MemberFilter {
  @Field(() => String, {
    nullable: true,
    description:
      `1-${MAX_SEARCH_TEXT} characters after trimming: members whose firstName, lastName, "firstName lastName", emailAddress ` +
      'or externalId contains the text, case-insensitive; % and _ are plain characters.',
  })
  @Rule(SEARCH.q)
  q?: string | null;

  @Field(() => String, { nullable: true, description: 'The member with this address, case-insensitive.' })
  @Rule(SEARCH.emailAddress)
  emailAddress?: string | null;

  @Field(() => [MemberFieldFilter], { nullable: true, description: `At most ${MAX_FIELD_FILTERS}; each must match.` })
  @Rule(SEARCH.fields)
  fields?: MemberFieldFilter[] | null;
}

@ArgsType()
export class MemberListArgs extends sortableArgs('Member', MemberSortField, { modifiedSince: true }) {
  @Field(() => MemberFilter, { nullable: true, description: 'Only members matching every given filter.' })
  filter?: MemberFilter | null;
}
