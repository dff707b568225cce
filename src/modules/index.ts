import { registerVersioned } from '../db/version';
import { registerLoaders, versionsById } from '../loaders';
import { additionalFieldsModule } from './additional-fields/module';
import { communitiesModule } from './communities/module';
import { eventsModule } from './events/module';
import { groupsModule } from './groups/module';
import { importsModule } from './imports/module';
import { membersModule } from './members/module';
import { membershipsModule } from './memberships/module';
import type { FeatureModule } from './module';
import { notificationsModule } from './notifications/module';
import { webhooksModule } from './webhooks/module';

/**
 * Every feature; the schema, the REST route table, the entity list (src/db/entities.ts),
 * the task and schedule tables (src/jobs/tasks.ts), the versioned records, the loaders and
 * the runtime's start/stop steps (src/runtime.ts) are assembled from this list.
 */
export const modules: FeatureModule[] = [
  communitiesModule,
  groupsModule,
  membershipsModule,
  additionalFieldsModule,
  membersModule,
  notificationsModule,
  importsModule,
  eventsModule,
  webhooksModule,
];

const versioned = modules.flatMap((m) => m.versioned ?? []);
registerVersioned(versioned);
registerLoaders([...modules.flatMap((m) => m.loaders ?? []), ...versioned.map(versionsById)]);
