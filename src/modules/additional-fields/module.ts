import type { FeatureModule } from '../module';
import { AdditionalField } from './additional-field.entity';
import { additionalFieldById } from './additional-field.loaders';
import { additionalFieldRoutes } from './additional-field.rest';
import { AdditionalFieldResolver } from './additional-field.resolver';

export const additionalFieldsModule: FeatureModule = {
  resolvers: [AdditionalFieldResolver],
  routes: additionalFieldRoutes,
  entities: [AdditionalField],
  versioned: [AdditionalField],
  loaders: [additionalFieldById],
};
