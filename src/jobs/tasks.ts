import { modules } from '../modules';
import { PURGE_IDEMPOTENCY_KEYS, purgeIdempotencyKeysSchedule, purgeIdempotencyKeysTask } from './purge-idempotency.task';
import type { TaskHandler } from './queue';
import type { CronItem } from 'graphile-worker';

/** Every background task by its queue name, as the feature modules declare them, and the platform's own; a worker serves all of them. */
export const tasks: Record<string, TaskHandler> = Object.assign({}, ...modules.map((m) => m.tasks ?? {}), {
  [PURGE_IDEMPOTENCY_KEYS]: purgeIdempotencyKeysTask,
});

/** Recurring tasks (graphile-worker cron), as the feature modules declare them, and the platform's own. */
export const schedules: CronItem[] = [purgeIdempotencyKeysSchedule, ...modules.flatMap((m) => m.schedules ?? [])];
