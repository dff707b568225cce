import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';

/** `role` and `orderNumber` are absent on purpose: the service assigns them (REST sends 400 naming them). */
@InputType({ description: 'ApiGroupMembershipInput: memberId or memberExternalId (at least one; both must name the same member).' })
export class CreateGroupMembershipInput {
  @Field(() => ID, { nullable: true, description: 'Id of a member of the same community.' })
  memberId?: string | null;

  @Field(() => String, { nullable: true, description: 'externalId of a member of the same community.' })
  memberExternalId?: string | null;

  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique within the group.' })
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: 'At most 256 characters.' })
  title?: string | null;
}

@InputType({ description: 'ApiGroupMembershipsInput: 1-1000 memberships, created all or none.' })
export class CreateGroupMembershipsInput {
  @Field(() => [CreateGroupMembershipInput])
  groupMemberships!: CreateGroupMembershipInput[];
}

@InputType({ description: 'ApiGroupMembershipPatchInput: only the given fields change; null clears.' })
export class UpdateGroupMembershipInput {
  @Field(() => String, { nullable: true })
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  title?: string | null;
}

@InputType({ description: 'One membership of the new order: matched by id, or by externalId when id is absent.' })
export class GroupMembershipOrderItem {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;
}

@InputType({ description: 'ApiGroupMembershipsOrderInput: every membership of the group exactly once, in the new order.' })
export class GroupMembershipsOrderInput {
  @Field(() => [GroupMembershipOrderItem])
  order!: GroupMembershipOrderItem[];
}

export enum GroupMembershipSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  orderNumber = 'orderNumber',
}
export const GroupMembershipListArgs = sortableArgs('GroupMembership', GroupMembershipSortField, { modifiedSince: true });
export type GroupMembershipListArgs = InstanceType<typeof GroupMembershipListArgs>;

/** Sort names mapped to columns, for the hand-written window query of the relation loaders. */
export const SORT_COLUMN: Record<string, string> = {
  createdAt: 'created_at',
  modifiedAt: 'modified_at',
  orderNumber: 'order_number',
  id: 'id',
};
