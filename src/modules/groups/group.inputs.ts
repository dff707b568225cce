import { Field, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';

@InputType({ description: 'ApiGroupInput for creation.' })
export class CreateGroupInput {
  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique in the community.' })
  externalId?: string | null;

  @Field({ description: '1-256 characters.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2048 characters.' })
  about?: string | null;

  @Field(() => String, { nullable: true, description: '#RRGGBB' })
  color?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true.' })
  isVisibleInApp?: boolean | null;
}

@InputType({ description: 'ApiGroupInput for updates: only the given fields change.' })
export class UpdateGroupInput {
  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  about?: string | null;

  @Field(() => String, { nullable: true })
  color?: string | null;

  @Field(() => Boolean, { nullable: true })
  isVisibleInApp?: boolean | null;
}

export enum GroupSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  name = 'name',
}
export const GroupListArgs = sortableArgs('Group', GroupSortField, { modifiedSince: true });
export type GroupListArgs = InstanceType<typeof GroupListArgs>;
