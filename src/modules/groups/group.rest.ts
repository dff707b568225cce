import { recordFields } from '../../rest/fields';
import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';
import { Group } from './group.entity';
import { GROUP as GROUP_RULES } from './group.inputs';

/** A group as its GET answers it, and as its events carry it: every field of the Group type. */
const GROUP_FIELDS = recordFields(Group);
const GROUP = `fragment GroupFields on Group { ${GROUP_FIELDS} }`;
export const groupEvents: EventSource = { resource: 'group', scope: 'groups', entity: 'Group', fields: GROUP_FIELDS };
const ref = { ref: { param: 'identifier', keyParam: 'key' as const, example: GROUP_RULES.externalId.example } };

export const groupRoutes: RouteSpec[] = [
  {
    operationId: 'getGroups',
    summary: 'Get groups',
    method: 'GET',
    path: '/groups',
    resource: 'groups',
    status: 200,
    list: true,
    response: { name: 'ApiGroupsResponse', item: 'ApiGroupResponse' },
    document: `query getGroups($limit: Int, $skip: Int, $sort: [GroupSort!], $modifiedSince: DateTimeISO, $filter: GroupFilter) {
      result: groups(limit: $limit, skip: $skip, sort: $sort, modifiedSince: $modifiedSince, filter: $filter) { results { ...GroupFields } limit skip size hasNextPage }
    } ${GROUP}`,
  },
  {
    operationId: 'addGroup',
    summary: 'Add group',
    method: 'POST',
    path: '/groups',
    resource: 'groups',
    status: 201,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addGroup($input: CreateGroupInput!) { result: createGroup(input: $input) { id externalId } }`,
  },
  {
    operationId: 'getGroup',
    summary: 'Get group',
    method: 'GET',
    path: '/groups/:identifier',
    resource: 'groups',
    status: 200,
    refs: ref,
    response: { name: 'ApiGroupResponse' },
    document: `query getGroup($ref: RecordRef!) { result: group(ref: $ref) { ...GroupFields } } ${GROUP}`,
  },
  {
    operationId: 'updateGroup',
    summary: 'Update group',
    method: 'PATCH',
    path: '/groups/:identifier',
    resource: 'groups',
    status: 204,
    refs: ref,
    body: 'input',
    document: `mutation updateGroup($ref: RecordRef!, $input: UpdateGroupInput!, $expectedVersion: String) { result: updateGroup(ref: $ref, input: $input, expectedVersion: $expectedVersion) { id } }`,
  },
  {
    operationId: 'deleteGroup',
    summary: 'Delete group',
    method: 'DELETE',
    path: '/groups/:identifier',
    resource: 'groups',
    status: 204,
    refs: ref,
    document: `mutation deleteGroup($ref: RecordRef!, $expectedVersion: String) { result: deleteGroup(ref: $ref, expectedVersion: $expectedVersion) }`,
  },
];
