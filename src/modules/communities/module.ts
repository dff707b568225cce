import { ApiKey } from '../../auth/api-key.entity';
import type { FeatureModule } from '../module';
import { AdminResolver } from './admin.resolver';
import { Community } from './community.entity';

/** The platform operator's part: communities and their API keys. */
export const communitiesModule: FeatureModule = { resolvers: [AdminResolver], routes: [], entities: [Community, ApiKey] };
