import { modules } from '../modules';
import { PURGE_IDEMPOTENCY_KEYS, purgeIdempotencyKeysSchedule, purgeIdempotencyKeysTask } from './purge-idempotency.task';
import { PURGE_EVENTS } from '../modules/events/purge.task';
import { ANNOUNCE_EXPIRED_KEYS } from '../modules/communities/key-events';
import type { TaskHandler } from './queue';
import type { CronItem } from 'graphile-worker';

/** Every background task by its queue name, as the feature modules declare them; a worker serves all of them. */
export const tasks: Record<string, TaskHandler> = Object.assign({}, ...modules.map((m) => m.tasks ?? {}), {
  [PURGE_IDEMPOTENCY_KEYS]: purgeIdempotencyKeysTask,
});

/** Recurring tasks (graphile-worker cron). */
export const schedules: CronItem[] = [
  purgeIdempotencyKeysSchedule,
  // Hourly purge of events past their retention (docs/events.md); one run per hour across instances.
  { task: PURGE_EVENTS, match: '17 * * * *', identifier: PURGE_EVENTS },
  // Every minute: an api_key.expired event for each key that ran out (docs/security.md).
  { task: ANNOUNCE_EXPIRED_KEYS, match: '* * * * *', identifier: ANNOUNCE_EXPIRED_KEYS },
];
