import { EXAMPLE_IDS } from '../../common/rules';
import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';

/** An import job as its events carry it: its GET also lists its first row errors, before the stamps. */
const JOB_RECORD = 'id kind status total processed created updated failed';
const JOB_STAMPS = 'createdAt modifiedAt';
const JOB = `fragment ImportJobFields on ImportJob {
  ${JOB_RECORD}
  errors(limit: 20) { results { row pointer detail } limit skip size hasNextPage }
  ${JOB_STAMPS}
}`;
export const importJobEvents: EventSource = {
  resource: 'import_job',
  scope: 'triggers',
  entity: 'ImportJob',
  fields: `${JOB_RECORD} ${JOB_STAMPS}`,
  actions: ['completed', 'failed'],
};

/**
 * 202: the import runs as a background job; `{ id, status }` names it, and `Location`
 * points at GET /import_jobs/{id}, which reports its progress and first row errors.
 */
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
    response: { name: 'ApiImportAcceptedResponse' },
    location: '/import_jobs/{id}',
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
    response: { name: 'ApiImportAcceptedResponse' },
    location: '/import_jobs/{id}',
    document: `mutation importMembers($input: MemberImportInput!) { result: importMembers(input: $input) { id status } }`,
  },
  {
    operationId: 'getImportJobs',
    summary: 'Get import jobs',
    method: 'GET',
    path: '/import_jobs',
    resource: 'triggers',
    status: 200,
    list: true,
    response: { name: 'ApiImportJobsResponse', item: 'ApiImportJobResponse' },
    document: `query getImportJobs($limit: Int, $skip: Int, $sort: [ImportJobSort!]) {
      result: importJobs(limit: $limit, skip: $skip, sort: $sort) { results { ...ImportJobFields } limit skip size hasNextPage }
    } ${JOB}`,
  },
  {
    operationId: 'getImportJob',
    summary: 'Get import job (status, counts, progress, first page of row errors)',
    method: 'GET',
    path: '/import_jobs/:identifier',
    resource: 'triggers',
    status: 200,
    idOnly: true,
    refs: { id: { param: 'identifier', keyParam: null, scalar: true, example: EXAMPLE_IDS.importJob } },
    response: { name: 'ApiImportJobResponse' },
    document: `query getImportJob($id: ID!) { result: importJob(id: $id) { ...ImportJobFields } } ${JOB}`,
  },
];
