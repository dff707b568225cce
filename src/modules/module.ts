import type { EntityClass } from '@mikro-orm/core';
import type { NonEmptyArray } from 'type-graphql';
import type { TaskHandler } from '../jobs/queue';
import type { LoaderFactory } from '../loaders';
import type { RouteSpec } from '../rest/route';

/**
 * Everything a feature folder brings, declared in its `module.ts` and nowhere else: the
 * schema, the REST route table, the ORM's entity list, the worker's task table and the
 * per-request loaders are all assembled from the list in src/modules/index.ts.
 */
export interface FeatureModule {
  /** type-graphql resolver classes (root fields and field resolvers). */
  resolvers: Function[];
  /** REST route table entries (src/rest/route.ts). */
  routes: RouteSpec[];
  /** MikroORM entities (discovery never scans folders). */
  entities: EntityClass<any>[];
  /** Background tasks by queue name; every worker serves all of them. */
  tasks?: Record<string, TaskHandler>;
  /** DataLoader factories, built per request on first use (`ctx.loaders.get(factory)`). */
  loaders?: LoaderFactory<any>[];
}

export type Resolvers = NonEmptyArray<Function>;
