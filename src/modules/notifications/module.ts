import type { FeatureModule } from '../module';
import { Notification, NotificationDelivery, NotificationRecipient } from './notification.entity';
import { deliveryPages, memberNotificationPages } from './notification.loaders';
import { notificationRoutes } from './notification.rest';
import { MemberNotificationsResolver, NotificationDeliveryResolver, NotificationResolver } from './notification.resolver';
import { SEND_NOTIFICATION } from './notification.service';
import { sendNotificationTask } from './notification.task';

export const notificationsModule: FeatureModule = {
  resolvers: [NotificationResolver, NotificationDeliveryResolver, MemberNotificationsResolver],
  routes: notificationRoutes,
  entities: [Notification, NotificationRecipient, NotificationDelivery],
  tasks: { [SEND_NOTIFICATION]: sendNotificationTask },
  loaders: [deliveryPages, memberNotificationPages],
};
