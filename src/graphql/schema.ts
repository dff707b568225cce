import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync } from 'type-graphql';
import { authChecker } from '../context';
import { AdminResolver } from '../modules/communities/admin.resolver';
import { GroupResolver } from '../modules/groups/group.resolver';

let cached: GraphQLSchema | undefined;

/** Built once per process: type-graphql metadata is global anyway. */
export function buildSchema(): GraphQLSchema {
  cached ??= buildSchemaSync({
    resolvers: [AdminResolver, GroupResolver],
    authChecker,
    validate: false,
  });
  return cached;
}

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(buildSchema())) + '\n';
}
