import type { EntityClass, MikroORM } from '@mikro-orm/core';
import type { CronItem } from 'graphile-worker';
import type { NonEmptyArray } from 'type-graphql';
import type { Config } from '../config';
import type { TaskHandler } from '../jobs/queue';
import type { LoaderFactory } from '../loaders';
import type { Logger } from '../logger';
import type { RouteSpec } from '../rest/route';
import type { RuntimeState } from '../state';

/** What a module's `start` hook gets: the runtime being started. */
export interface ModuleStart {
  config: Config;
  databaseUrl: string;
  orm: MikroORM;
  logger: Logger;
  /** Where the module keeps what lives as long as the runtime (src/state.ts). */
  state: RuntimeState;
}

/** Releases what `start` took; run in reverse start order when the runtime closes. */
export type ModuleStop = () => Promise<void>;

/**
 * Everything a feature folder brings, declared in its `module.ts` and nowhere else: the
 * schema, the REST route table, the ORM's entity list, the worker's task and schedule
 * tables, the versioned records, the per-request loaders and the runtime's start/stop
 * steps are all assembled from the list in src/modules/index.ts.
 */
export interface FeatureModule {
  /** type-graphql resolver classes (root fields and field resolvers). */
  resolvers: Function[];
  /** REST route table entries (src/rest/route.ts). */
  routes: RouteSpec[];
  /** MikroORM entities (discovery never scans folders). */
  entities: EntityClass<any>[];
  /**
   * Entities whose records carry a version (src/db/version.ts): GraphQL `version`, the REST
   * ETag/If-Match, lean rows selecting it. Each is also its GraphQL object type.
   */
  versioned?: EntityClass<any>[];
  /** Background tasks by queue name; every worker serves all of them. */
  tasks?: Record<string, TaskHandler>;
  /** Recurring runs of those tasks (graphile-worker cron; one run per slot across instances). */
  schedules?: CronItem[];
  /** DataLoader factories, built per request on first use (`ctx.loaders.get(factory)`). */
  loaders?: LoaderFactory<any>[];
  /** Run once when a runtime starts, before it serves; may return how to stop. */
  start?(runtime: ModuleStart): Promise<ModuleStop | void> | ModuleStop | void;
}

export type Resolvers = NonEmptyArray<Function>;
