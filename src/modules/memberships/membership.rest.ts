import { MEMBERSHIP as MEMBERSHIP_RULES } from '../../common/rules';
import { GROUP as GROUP_RULES } from '../groups/group.inputs';
import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';

/** A membership as its GET answers it; its events also carry groupId (the GET names the group in its path). */
const MEMBERSHIP_FIELDS = 'id externalId memberId memberExternalId title orderNumber role createdAt modifiedAt';
const MEMBERSHIP = `fragment GroupMembershipFields on GroupMembership { ${MEMBERSHIP_FIELDS} }`;
export const membershipEvents: EventSource = {
  resource: 'group_membership',
  scope: 'group_memberships',
  entity: 'GroupMembership',
  fields: `groupId ${MEMBERSHIP_FIELDS}`,
  actions: ['reordered'],
};
const group = { param: 'groupIdentifier', keyParam: 'groupsKey' as const, example: GROUP_RULES.externalId.example };
const inGroup = { groupRef: group };
const one = { groupRef: group, ref: { param: 'identifier', keyParam: 'key' as const, example: MEMBERSHIP_RULES.externalId.example } };
const base = { resource: 'group_memberships' as const };

/** Literal segments (`_bulk`, `order`) come before `/:identifier` (architecture.md). */
export const membershipRoutes: RouteSpec[] = [
  {
    ...base,
    operationId: 'getGroupMemberships',
    summary: 'Get group memberships',
    method: 'GET',
    path: '/groups/:groupIdentifier/memberships',
    status: 200,
    refs: inGroup,
    list: true,
    response: { name: 'ApiGroupMembershipsResponse', item: 'ApiGroupMembershipResponse' },
    document: `query getGroupMemberships($groupRef: RecordRef!, $limit: Int, $skip: Int, $sort: [GroupMembershipSort!], $modifiedSince: DateTimeISO) {
      result: groupMemberships(groupRef: $groupRef, limit: $limit, skip: $skip, sort: $sort, modifiedSince: $modifiedSince) {
        results { ...GroupMembershipFields } limit skip size hasNextPage
      }
    } ${MEMBERSHIP}`,
  },
  {
    ...base,
    operationId: 'addGroupMembership',
    summary: 'Add group membership',
    method: 'POST',
    path: '/groups/:groupIdentifier/memberships',
    status: 201,
    refs: inGroup,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addGroupMembership($groupRef: RecordRef!, $input: CreateGroupMembershipInput!) {
      result: createGroupMembership(groupRef: $groupRef, input: $input) { id externalId }
    }`,
  },
  {
    ...base,
    operationId: 'addGroupMemberships',
    summary: 'Add group memberships (bulk)',
    method: 'POST',
    path: '/groups/:groupIdentifier/memberships/_bulk',
    status: 201,
    refs: inGroup,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addGroupMemberships($groupRef: RecordRef!, $input: CreateGroupMembershipsInput!) {
      result: createGroupMemberships(groupRef: $groupRef, input: $input) { id externalId }
    }`,
  },
  {
    ...base,
    operationId: 'updateGroupMembershipsOrder',
    summary: 'Update group memberships order',
    method: 'PATCH',
    path: '/groups/:groupIdentifier/memberships/order',
    status: 204,
    refs: inGroup,
    body: 'input',
    document: `mutation updateGroupMembershipsOrder($groupRef: RecordRef!, $input: GroupMembershipsOrderInput!) {
      result: reorderGroupMemberships(groupRef: $groupRef, input: $input) { id }
    }`,
  },
  {
    ...base,
    operationId: 'getGroupMembership',
    summary: 'Get group membership',
    method: 'GET',
    path: '/groups/:groupIdentifier/memberships/:identifier',
    status: 200,
    refs: one,
    response: { name: 'ApiGroupMembershipResponse' },
    document: `query getGroupMembership($groupRef: RecordRef!, $ref: RecordRef!) {
      result: groupMembership(groupRef: $groupRef, ref: $ref) { ...GroupMembershipFields }
    } ${MEMBERSHIP}`,
  },
  {
    ...base,
    operationId: 'updateGroupMembership',
    summary: 'Update group membership',
    method: 'PATCH',
    path: '/groups/:groupIdentifier/memberships/:identifier',
    status: 204,
    refs: one,
    body: 'input',
    document: `mutation updateGroupMembership($groupRef: RecordRef!, $ref: RecordRef!, $input: UpdateGroupMembershipInput!, $expectedVersion: String) {
      result: updateGroupMembership(groupRef: $groupRef, ref: $ref, input: $input, expectedVersion: $expectedVersion) { id }
    }`,
  },
  {
    ...base,
    operationId: 'deleteGroupMembership',
    summary: 'Delete group membership',
    method: 'DELETE',
    path: '/groups/:groupIdentifier/memberships/:identifier',
    status: 204,
    refs: one,
    document: `mutation deleteGroupMembership($groupRef: RecordRef!, $ref: RecordRef!, $expectedVersion: String) {
      result: deleteGroupMembership(groupRef: $groupRef, ref: $ref, expectedVersion: $expectedVersion)
    }`,
  },
];
