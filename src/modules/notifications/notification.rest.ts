import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';

/** A notification as its events carry it (GraphQL's `notification` answers the same; no REST route reads one back). */
export const notificationEvents: EventSource = {
  resource: 'notification',
  scope: 'notifications',
  entity: 'Notification',
  fields: 'id title message status receiversCount sendAt sentAt cancelledAt createdAt modifiedAt',
  actions: ['sent'],
};

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
