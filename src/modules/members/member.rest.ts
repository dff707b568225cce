import { MEMBER as MEMBER_RULES } from '../../common/rules';
import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';

/** A member as its GET answers it, and as its events carry it. */
const MEMBER_FIELDS = 'id externalId firstName lastName emailAddress additionalFields { id value } createdAt modifiedAt';
const MEMBER = `fragment MemberFields on Member { ${MEMBER_FIELDS} }`;
export const memberEvents: EventSource = { resource: 'member', scope: 'members', entity: 'Member', fields: MEMBER_FIELDS };
const ref = { ref: { param: 'identifier', keyParam: 'key' as const, example: MEMBER_RULES.externalId.example } };

/** `/members/_bulk` comes before the `/members/:identifier` routes (literal segments first). */
export const memberRoutes: RouteSpec[] = [
  {
    operationId: 'getMembers',
    summary: 'Get members',
    method: 'GET',
    path: '/members',
    resource: 'members',
    status: 200,
    list: true,
    response: { name: 'ApiMembersResponse', item: 'ApiMemberResponse' },
    document: `query getMembers($limit: Int, $skip: Int, $sort: [MemberSort!], $modifiedSince: DateTimeISO, $filter: MemberFilter) {
      result: members(limit: $limit, skip: $skip, sort: $sort, modifiedSince: $modifiedSince, filter: $filter) { results { ...MemberFields } limit skip size hasNextPage }
    } ${MEMBER}`,
  },
  {
    operationId: 'addMember',
    summary: 'Add member',
    method: 'POST',
    path: '/members',
    resource: 'members',
    status: 201,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addMember($input: CreateMemberInput!) { result: createMember(input: $input) { id externalId } }`,
  },
  {
    operationId: 'addMembers',
    summary: 'Add members (bulk)',
    method: 'POST',
    path: '/members/_bulk',
    resource: 'members',
    status: 201,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addMembers($input: CreateMembersInput!) { result: createMembers(input: $input) { id externalId } }`,
  },
  {
    operationId: 'getMember',
    summary: 'Get member',
    method: 'GET',
    path: '/members/:identifier',
    resource: 'members',
    status: 200,
    refs: ref,
    response: { name: 'ApiMemberResponse' },
    document: `query getMember($ref: RecordRef!) { result: member(ref: $ref) { ...MemberFields } } ${MEMBER}`,
  },
  {
    operationId: 'updateMember',
    summary: 'Update member',
    method: 'PATCH',
    path: '/members/:identifier',
    resource: 'members',
    status: 204,
    refs: ref,
    body: 'input',
    document: `mutation updateMember($ref: RecordRef!, $input: UpdateMemberInput!, $expectedVersion: String) { result: updateMember(ref: $ref, input: $input, expectedVersion: $expectedVersion) { id } }`,
  },
  {
    operationId: 'deleteMember',
    summary: 'Delete member',
    method: 'DELETE',
    path: '/members/:identifier',
    resource: 'members',
    status: 204,
    refs: ref,
    document: `mutation deleteMember($ref: RecordRef!, $expectedVersion: String) { result: deleteMember(ref: $ref, expectedVersion: $expectedVersion) }`,
  },
];
