import { ApiKey } from '../../auth/api-key.entity';
import type { FeatureModule } from '../module';
import { AdminResolver } from './admin.resolver';
import { Community } from './community.entity';
import { ANNOUNCE_EXPIRED_KEYS, announceExpiredKeysTask } from './key-events';

/** The platform operator's part: communities and their API keys. */
export const communitiesModule: FeatureModule = {
  resolvers: [AdminResolver],
  routes: [],
  entities: [Community, ApiKey],
  tasks: { [ANNOUNCE_EXPIRED_KEYS]: announceExpiredKeysTask },
  // Every minute: an api_key.expired event for each key that ran out (docs/security.md).
  schedules: [{ task: ANNOUNCE_EXPIRED_KEYS, match: '* * * * *', identifier: ANNOUNCE_EXPIRED_KEYS }],
};
