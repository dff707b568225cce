import type { FeatureModule } from '../module';
import { groupRoutes } from './group.rest';
import { GroupResolver } from './group.resolver';

export const groupsModule: FeatureModule = { resolvers: [GroupResolver], routes: groupRoutes };
