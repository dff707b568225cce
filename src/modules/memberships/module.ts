import type { FeatureModule } from '../module';

export const membershipsModule: FeatureModule = { resolvers: [], routes: [] };
