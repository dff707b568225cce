import type { FeatureModule } from '../module';
import { importRoutes } from './import.rest';
import { ImportResolver } from './import.resolver';

export const importsModule: FeatureModule = { resolvers: [ImportResolver], routes: importRoutes };
