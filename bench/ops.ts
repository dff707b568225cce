import { routes } from '../src/rest/routes';
import type { Seeded } from './seed';

/**
 * One measured operation, in its three arms: the REST route, the same GraphQL document
 * POSTed to /graphql with the variables the facade would bind, and the raw server's
 * twin of the REST route (same path, same JSON).
 */
export interface LoadOp {
  id: string;
  label: string;
  /** The facade route whose `document` the GraphQL arm sends. */
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH';
  /** REST path with query, also served by the raw server. */
  path: string;
  body?: unknown;
  /** What facade.ts bindVariables produces for this request. */
  variables: Record<string, unknown>;
  /** A list route: held to the raw-throughput goal. */
  list: boolean;
  /** The same page asked of each PostGraphile peer (its GraphQL request), when they can answer it. */
  peer?: Record<'postgraphile4' | 'postgraphile5', { query: string; variables: Record<string, unknown> }>;
}

/**
 * The groups page in PostGraphile's schema: the community's groups by createdAt, id, with
 * the stored membership count and whether a next page exists (the REST envelope's `next`
 * link needs that too). PostGraphile 5's amber preset names the `id` column `rowId` (its
 * `id` is the global Node ID), so its document aliases it back.
 */
const peerGroupsQuery = (idField: string, idOrder: string) => `query GroupsPage($communityId: UUID!, $first: Int!) {
  allGroups(condition: { communityId: $communityId }, orderBy: [CREATED_AT_ASC, ${idOrder}], first: $first) {
    nodes { id: ${idField} externalId name about color membershipCount isVisibleInApp state createdAt modifiedAt }
    pageInfo { hasNextPage }
  }
}`;
export const PEER_GROUPS_QUERY = { postgraphile4: peerGroupsQuery('id', 'ID_ASC'), postgraphile5: peerGroupsQuery('rowId', 'ROW_ID_ASC') };

export function documentOf(operationId: string): string {
  const route = routes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`bench: no route ${operationId} in the route table`);
  return route.document;
}

export const graphqlBody = (op: Pick<LoadOp, 'operationId' | 'variables'>): string =>
  JSON.stringify({ query: documentOf(op.operationId), variables: op.variables });

const NEW_GROUP = { name: 'Bench group', about: 'Created by the benchmark', color: '#1E90FF', isVisibleInApp: true };

/** The operations measured under load. */
export function loadOps(s: Seeded): LoadOp[] {
  const byOrder = [{ field: 'orderNumber', direction: 'ASC' }];
  return [
    { id: 'groups20', label: 'GET /groups?limit=20', operationId: 'getGroups', method: 'GET', path: '/api/v1/groups?limit=20', variables: { limit: 20 }, list: true,
      peer: {
        postgraphile4: { query: PEER_GROUPS_QUERY.postgraphile4, variables: { communityId: s.communityId, first: 20 } },
        postgraphile5: { query: PEER_GROUPS_QUERY.postgraphile5, variables: { communityId: s.communityId, first: 20 } },
      } },
    { id: 'groups100', label: 'GET /groups?limit=100', operationId: 'getGroups', method: 'GET', path: '/api/v1/groups?limit=100', variables: { limit: 100 }, list: true },
    { id: 'group', label: 'GET /groups/{id}', operationId: 'getGroup', method: 'GET', path: `/api/v1/groups/${s.groupId}`, variables: { ref: { id: s.groupId } }, list: false },
    {
      id: 'groupExt',
      label: 'GET /groups/{externalId}?key=externalId',
      operationId: 'getGroup',
      method: 'GET',
      path: `/api/v1/groups/${s.groupExternalId}?key=externalId`,
      variables: { ref: { externalId: s.groupExternalId } },
      list: false,
    },
    {
      id: 'memberships100',
      label: 'GET /groups/{10k group}/memberships?sort=orderNumber&limit=100',
      operationId: 'getGroupMemberships',
      method: 'GET',
      path: `/api/v1/groups/${s.bigGroupId}/memberships?sort=orderNumber&limit=100`,
      variables: { groupRef: { id: s.bigGroupId }, limit: 100, sort: byOrder },
      list: true,
    },
    { id: 'addGroup', label: 'POST /groups', operationId: 'addGroup', method: 'POST', path: '/api/v1/groups', body: NEW_GROUP, variables: { input: NEW_GROUP }, list: false },
  ];
}

/** Extra page sizes counted for SQL only: statements must not grow with the page. */
export function sqlOnlyOps(s: Seeded): LoadOp[] {
  return [
    {
      id: 'memberships20',
      label: 'GET /groups/{10k group}/memberships?sort=orderNumber&limit=20',
      operationId: 'getGroupMemberships',
      method: 'GET',
      path: `/api/v1/groups/${s.bigGroupId}/memberships?sort=orderNumber&limit=20`,
      variables: { groupRef: { id: s.bigGroupId }, limit: 20, sort: [{ field: 'orderNumber', direction: 'ASC' }] },
      list: true,
    },
  ];
}

/** Body of a bulk create of `n` memberships (members by id, each with its own externalId). */
export function bulkBody(memberIds: string[], n: number, tag: string) {
  return {
    groupMemberships: memberIds.slice(0, n).map((memberId, i) => ({ memberId, externalId: `${tag}-${i}`, title: `Bulk ${i}` })),
  };
}

/** Body of a reorder naming every membership by id (the contract also allows externalId). */
export const orderBody = (ids: string[]) => ({ order: ids.map((id) => ({ id })) });

/** Statements per request of bench/raw-server.ts, by construction (its key lookup is cached for good). */
export const RAW_SQL: Record<string, number> = {
  groups20: 2, // rate-limit upsert, page
  groups100: 2,
  group: 2, // upsert, group
  groupExt: 2,
  memberships100: 4, // upsert, group, page, members of the page
  addGroup: 4, // upsert, begin, insert, commit (as MikroORM's flush)
};
