import type { FeatureModule } from '../module';

export const membersModule: FeatureModule = { resolvers: [], routes: [] };
