import type { FeatureModule } from '../module';
import { Group } from './group.entity';
import { groupById } from './group.loaders';
import { groupRoutes } from './group.rest';
import { GroupResolver } from './group.resolver';

export const groupsModule: FeatureModule = { resolvers: [GroupResolver], routes: groupRoutes, entities: [Group], versioned: [Group], loaders: [groupById] };
