import { RUN_IMPORT } from '../modules/imports/import.service';
import { runImportTask } from '../modules/imports/import.task';
import { SEND_NOTIFICATION } from '../modules/notifications/notification.service';
import { sendNotificationTask } from '../modules/notifications/notification.task';
import { PURGE_EVENTS, purgeEventsTask } from '../modules/events/purge.task';
import { DELIVER_WEBHOOK, deliverWebhookTask, DISPATCH_WEBHOOKS, dispatchWebhooksTask } from '../modules/webhooks/delivery.task';
import type { TaskHandler } from './queue';

/** Every background task by its queue name; a worker serves all of them. */
export const tasks: Record<string, TaskHandler> = {
  [SEND_NOTIFICATION]: sendNotificationTask,
  [RUN_IMPORT]: runImportTask,
  [PURGE_EVENTS]: purgeEventsTask,
  [DISPATCH_WEBHOOKS]: dispatchWebhooksTask,
  [DELIVER_WEBHOOK]: deliverWebhookTask,
};
