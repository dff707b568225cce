import type { FeatureModule } from '../module';
import { notificationRoutes } from './notification.rest';
import { MemberNotificationsResolver, NotificationDeliveryResolver, NotificationResolver } from './notification.resolver';

export const notificationsModule: FeatureModule = {
  resolvers: [NotificationResolver, NotificationDeliveryResolver, MemberNotificationsResolver],
  routes: notificationRoutes,
};
