import type { FeatureModule } from '../module';
import { additionalFieldRoutes } from './additional-field.rest';
import { AdditionalFieldResolver } from './additional-field.resolver';

export const additionalFieldsModule: FeatureModule = { resolvers: [AdditionalFieldResolver], routes: additionalFieldRoutes };
