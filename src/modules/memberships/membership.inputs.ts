import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { EXAMPLE_IDS, MEMBER, MEMBERSHIP, Rule } from '../../common/rules';

/** `role` and `orderNumber` are absent on purpose: the service assigns them (REST sends 400 naming them). */
@InputType({ description: 'ApiGroupMembershipInput: memberId or memberExternalId (at least one; both must name the same member).' })
@Rule({
  name: 'ApiGroupMembershipInput',
  anyOf: [['memberId'], ['memberExternalId']],
  example: { memberExternalId: MEMBER.externalId.example, externalId: MEMBERSHIP.externalId.example, title: MEMBERSHIP.title.example },
})
export class CreateGroupMembershipInput {
  @Field(() => ID, { nullable: true, description: 'Id of a member of the same community.' })
  @Rule({ kind: 'value', example: EXAMPLE_IDS.member })
  memberId?: string | null;

  @Field(() => String, { nullable: true, description: 'externalId of a member of the same community.' })
  @Rule({ kind: 'value', example: MEMBER.externalId.example })
  memberExternalId?: string | null;

  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique within the group.' })
  @Rule(MEMBERSHIP.externalId)
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: 'At most 256 characters.' })
  @Rule(MEMBERSHIP.title)
  title?: string | null;
}

@InputType({ description: 'ApiGroupMembershipsInput: 1-1000 memberships, created all or none.' })
@Rule({
  name: 'ApiGroupMembershipsInput',
  example: {
    groupMemberships: [
      { memberExternalId: 'grace-hopper', externalId: 'grace-in-berlin' },
      { memberExternalId: 'alan-turing', externalId: 'alan-in-berlin', title: 'Mentor' },
    ],
  },
})
export class CreateGroupMembershipsInput {
  @Field(() => [CreateGroupMembershipInput])
  @Rule(MEMBERSHIP.bulk)
  groupMemberships!: CreateGroupMembershipInput[];
}

@InputType({ description: 'ApiGroupMembershipPatchInput: only the given fields change; null clears.' })
@Rule({ name: 'ApiGroupMembershipPatchInput', example: { title: 'Team lead' } })
export class UpdateGroupMembershipInput {
  @Field(() => String, { nullable: true })
  @Rule(MEMBERSHIP.externalId)
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  @Rule(MEMBERSHIP.title)
  title?: string | null;
}

@InputType({ description: 'One membership of the new order: matched by id, or by externalId when id is absent.' })
@Rule({ name: 'ApiGroupMembershipsOrderItem', anyOf: [['id'], ['externalId']], example: { externalId: 'ada-in-berlin' } })
export class GroupMembershipOrderItem {
  @Field(() => ID, { nullable: true })
  @Rule({ kind: 'value', example: EXAMPLE_IDS.member })
  id?: string | null;

  @Field(() => String, { nullable: true })
  @Rule({ kind: 'value', example: MEMBERSHIP.externalId.example })
  externalId?: string | null;
}

@InputType({ description: 'ApiGroupMembershipsOrderInput: every membership of the group exactly once, in the new order.' })
@Rule({
  name: 'ApiGroupMembershipsOrderInput',
  example: { order: [{ externalId: 'alan-in-berlin' }, { externalId: 'grace-in-berlin' }, { externalId: 'ada-in-berlin' }] },
})
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
