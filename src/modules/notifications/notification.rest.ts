import type { RouteSpec } from '../../rest/route';

export const notificationRoutes: RouteSpec[] = [
  {
    operationId: 'addNotification',
    summary: 'Send or schedule a notification for specified members',
    method: 'POST',
    path: '/notifications',
    resource: 'notifications',
    status: 201,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addNotification($input: CreateNotificationInput!) { result: createNotification(input: $input) { id externalId } }`,
  },
];
