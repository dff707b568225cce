import { RUN_IMPORT } from '../modules/imports/import.service';
import { runImportTask } from '../modules/imports/import.task';
import { SEND_NOTIFICATION } from '../modules/notifications/notification.service';
import { sendNotificationTask } from '../modules/notifications/notification.task';
import { PURGE_IDEMPOTENCY_KEYS, purgeIdempotencyKeysSchedule, purgeIdempotencyKeysTask } from './purge-idempotency.task';
import type { TaskHandler } from './queue';
import type { CronItem } from 'graphile-worker';

/** Every background task by its queue name; a worker serves all of them. */
export const tasks: Record<string, TaskHandler> = {
  [SEND_NOTIFICATION]: sendNotificationTask,
  [RUN_IMPORT]: runImportTask,
  [PURGE_IDEMPOTENCY_KEYS]: purgeIdempotencyKeysTask,
};

/** Recurring tasks (graphile-worker cron). */
export const schedules: CronItem[] = [purgeIdempotencyKeysSchedule];
