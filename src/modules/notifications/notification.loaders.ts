import { pagesPerOwner } from '../../db/sql';
import { pagesByOwner } from '../../loaders';
import { Notification, NotificationDelivery } from './notification.entity';

/** Notification id -> one page of its deliveries, by deliveredAt then id. */
export const deliveryPages = pagesByOwner(({ em, communityId }, ids, window) =>
  pagesPerOwner(
    em,
    {
      select: 'd.*',
      from: 'notification_deliveries d join notifications n on n.id = d.notification_id',
      where: 'n.community_id = ?',
      params: [communityId],
      owner: 'd.notification_id',
      orderBy: 'd.delivered_at, d.id',
    },
    ids,
    window,
    (row) => em.map(NotificationDelivery, row),
  ),
);

/** Member id -> one page of the notifications addressed to it, oldest first. */
export const memberNotificationPages = pagesByOwner(({ em, communityId }, ids, window) =>
  pagesPerOwner(
    em,
    {
      select: 'n.*',
      from: 'notification_recipients r join notifications n on n.id = r.notification_id',
      where: 'n.community_id = ?',
      params: [communityId],
      owner: 'r.member_id',
      orderBy: 'n.created_at, n.id',
    },
    ids,
    window,
    (row) => em.map(Notification, row),
  ),
);
