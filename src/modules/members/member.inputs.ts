import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';

@InputType({ description: "A value for one of the community's additional fields." })
export class MemberFieldValueInput {
  @Field(() => ID, { description: 'The id of an additional field of the same community.' })
  id!: string;

  @Field(() => String, { nullable: true, description: 'At most 2048 characters. null: no value (on update: removes the value).' })
  value?: string | null;
}

@InputType({ description: 'A member for creation; at least one of externalId, firstName, lastName, emailAddress.' })
export class CreateMemberInput {
  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique in the community.' })
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: '1-256 characters.' })
  firstName?: string | null;

  @Field(() => String, { nullable: true, description: '1-256 characters.' })
  lastName?: string | null;

  @Field(() => String, { nullable: true, description: 'A valid address, unique in the community (case-insensitive).' })
  emailAddress?: string | null;

  @Field(() => [MemberFieldValueInput], { nullable: true, description: 'Each additional field at most once.' })
  additionalFields?: MemberFieldValueInput[] | null;
}

@InputType({ description: 'Bulk creation: 1-1000 members, all or nothing.' })
export class CreateMembersInput {
  @Field(() => [CreateMemberInput])
  members!: CreateMemberInput[];
}

@InputType({
  description: 'Only the given fields change. additionalFields: listed values are set (null removes one); unlisted values stay.',
})
export class UpdateMemberInput {
  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;

  @Field(() => String, { nullable: true })
  emailAddress?: string | null;

  @Field(() => [MemberFieldValueInput], { nullable: true })
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
