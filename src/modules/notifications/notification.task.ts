import type { EntityManager } from '@mikro-orm/postgresql';
import { transaction } from '../../db/transaction';
import type { TaskHandler } from '../../jobs/queue';
import { deliverNotification } from './notification.service';

/**
 * The scheduled send. A retry or a second worker finds the notification no longer
 * SCHEDULED and does nothing (see deliverNotification); a cancelled one is skipped the same way.
 */
export const sendNotificationTask: TaskHandler = async (payload, _helpers, { orm, logger }) => {
  const { notificationId } = payload as { notificationId: string };
  const em = orm.em.fork() as unknown as EntityManager;
  const sent = await transaction(em, (tx) => deliverNotification(tx, notificationId));
  logger.debug({ notificationId, sent }, 'scheduled notification handled');
};
