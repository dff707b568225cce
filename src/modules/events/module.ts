import type { FeatureModule } from '../module';
import { eventRoutes } from './event.rest';
import { EventResolver } from './event.resolver';
import { PURGE_EVENTS, purgeEventsTask } from './purge.task';

export const eventsModule: FeatureModule = {
  resolvers: [EventResolver],
  routes: eventRoutes,
  entities: [],
  tasks: { [PURGE_EVENTS]: purgeEventsTask },
};
