import type { FeatureModule } from '../module';
import { AdminResolver } from './admin.resolver';

export const communitiesModule: FeatureModule = { resolvers: [AdminResolver], routes: [] };
