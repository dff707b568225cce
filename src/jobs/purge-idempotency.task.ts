import type { EntityManager } from '@mikro-orm/postgresql';
import type { CronItem } from 'graphile-worker';
import { purgeExpiredKeys } from '../http/idempotency';
import type { TaskHandler } from './queue';

export const PURGE_IDEMPOTENCY_KEYS = 'purge_idempotency_keys';

/**
 * Deletes stored Idempotency-Key answers past their 24 hours (lookups already ignore them).
 * Scheduled by graphile-worker's cron: with several instances the schedule still fires once
 * per slot (it records the slots it fired in its own table).
 */
export const purgeIdempotencyKeysTask: TaskHandler = async (_payload, _helpers, { orm, logger }) => {
  const deleted = await purgeExpiredKeys(orm.em.fork() as unknown as EntityManager);
  logger.debug({ deleted }, 'expired idempotency keys purged');
};

/** Every hour at minute 17; a missed run (all instances down) is not made up, the next one catches up. */
export const purgeIdempotencyKeysSchedule: CronItem = { task: PURGE_IDEMPOTENCY_KEYS, match: '17 * * * *', identifier: PURGE_IDEMPOTENCY_KEYS };
