import type { FeatureModule } from '../module';
import { eventRoutes } from './event.rest';
import { EventResolver } from './event.resolver';

export const eventsModule: FeatureModule = { resolvers: [EventResolver], routes: eventRoutes };
