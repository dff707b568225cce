import type { RouteSpec } from '../../rest/route';

/** 202: the import runs as a background job; `{ id, status }` names it for importJob(id). */
export const importRoutes: RouteSpec[] = [
  {
    operationId: 'importGroups',
    summary: 'Import groups (upsert by externalId; JSON or CSV)',
    method: 'POST',
    path: '/triggers/groups/import',
    resource: 'triggers',
    status: 202,
    body: 'input',
    csv: { rows: 'groups' },
    document: `mutation importGroups($input: GroupImportInput!) { result: importGroups(input: $input) { id status } }`,
  },
  {
    operationId: 'importMembers',
    summary: 'Import members (upsert by externalId; JSON or CSV)',
    method: 'POST',
    path: '/triggers/members/import',
    resource: 'triggers',
    status: 202,
    body: 'input',
    csv: { rows: 'members' },
    document: `mutation importMembers($input: MemberImportInput!) { result: importMembers(input: $input) { id status } }`,
  },
];
