import { VERSION_LOADERS } from '../../db/version';
import type { FeatureModule } from '../module';
import { Group } from './group.entity';
import { groupById } from './group.loaders';
import { groupRoutes } from './group.rest';
import { GroupResolver } from './group.resolver';

export const groupsModule: FeatureModule = { resolvers: [GroupResolver], routes: groupRoutes, entities: [Group], loaders: [groupById, VERSION_LOADERS.groups] };
