import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { EXAMPLE_IDS, MEMBER, Rule } from '../../common/rules';

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
export const MemberListArgs = sortableArgs('Member', MemberSortField, { modifiedSince: true });
export type MemberListArgs = InstanceType<typeof MemberListArgs>;
