import type { NonEmptyArray } from 'type-graphql';
import type { RouteSpec } from '../rest/route';

/** What a feature folder contributes: its resolvers and its REST route table entries. */
export interface FeatureModule {
  resolvers: Function[];
  routes: RouteSpec[];
}

export type Resolvers = NonEmptyArray<Function>;
