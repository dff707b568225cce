import type { RouteSpec } from '../../rest/route';

export const eventRoutes: RouteSpec[] = [
  {
    operationId: 'getEvents',
    summary: 'Get events (the change feed)',
    method: 'GET',
    path: '/events',
    resource: 'events',
    status: 200,
    cursor: {
      after: 'The id of the last event already read; the page starts after it. An id older than the retention period gives 410.',
      types: 'Comma-separated event types, e.g. `group.created,group.deleted`; default: every type the key may read.',
    },
    response: { name: 'ApiEventsResponse', item: 'ApiEventResponse' },
    document: `query getEvents($after: String, $limit: Int, $types: [String!]) {
      result: events(after: $after, limit: $limit, types: $types) {
        results { id type createdAt data changes } limit size hasNextPage next
      }
    }`,
  },
];
