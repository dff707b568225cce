import type { EntityManager } from '@mikro-orm/postgresql';
import type { TaskHandler } from '../../jobs/queue';
import { purgeEvents } from './event.service';
import { EVENT_SETTINGS } from './settings';

export const PURGE_EVENTS = 'events:purge';

/** Scheduled hourly (graphile-worker cron, src/jobs/queue.ts): drops what is past retention. */
export const purgeEventsTask: TaskHandler = async (_payload, _helpers, { orm, logger, state }) => {
  const purged = await purgeEvents(orm.em.fork() as EntityManager, state.get(EVENT_SETTINGS).retentionDays);
  if (purged) logger.info({ purged }, 'events purged');
};
