import type { FeatureModule } from '../module';

export const additionalFieldsModule: FeatureModule = { resolvers: [], routes: [] };
