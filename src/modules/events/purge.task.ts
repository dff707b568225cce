import type { EntityManager } from '@mikro-orm/postgresql';
import type { TaskHandler } from '../../jobs/queue';
import { purgeEvents } from './event.service';

export const PURGE_EVENTS = 'events:purge';

/** Scheduled hourly (graphile-worker cron, src/jobs/queue.ts): drops what is past retention. */
export const purgeEventsTask: TaskHandler = async (_payload, _helpers, { orm, logger }) => {
  const purged = await purgeEvents(orm.em.fork() as EntityManager);
  if (purged) logger.info({ purged }, 'events purged');
};
