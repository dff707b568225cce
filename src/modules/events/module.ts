import type { FeatureModule } from '../module';
import { eventRoutes } from './event.rest';
import { EventResolver } from './event.resolver';
import { EVENT_HUB, EventHub } from './hub';
import { PURGE_EVENTS, purgeEventsTask } from './purge.task';
import { EVENT_SETTINGS, eventSettingsOf } from './settings';

export const eventsModule: FeatureModule = {
  resolvers: [EventResolver],
  routes: eventRoutes,
  entities: [],
  tasks: { [PURGE_EVENTS]: purgeEventsTask },
  // Hourly purge of events past their retention (docs/events.md); one run per hour across instances.
  schedules: [{ task: PURGE_EVENTS, match: '17 * * * *', identifier: PURGE_EVENTS }],
  start({ config, databaseUrl, logger, state }) {
    state.set(EVENT_SETTINGS, eventSettingsOf(config));
    const hub = new EventHub(databaseUrl, logger);
    state.set(EVENT_HUB, hub);
    return () => hub.close();
  },
};
