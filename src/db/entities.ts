import { ApiKey } from '../auth/api-key.entity';
import { Community } from '../modules/communities/community.entity';
import { Group } from '../modules/groups/group.entity';

/** Every entity, listed once (discovery never scans folders). */
export const entities = [Community, ApiKey, Group];
