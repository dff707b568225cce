import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync } from 'type-graphql';
import { authChecker } from '../context';
import { modules } from '../modules';
import { DateTimeISO } from './date-scalar';
import type { Resolvers } from '../modules/module';
import { versionResolver } from './version.resolver';
import { untraced } from '../observability/spans';

let cached: GraphQLSchema | undefined;

/** Built once per process: type-graphql metadata is global anyway. Outside any trace (untraced says why). */
export function buildSchema(): GraphQLSchema {
  cached ??= untraced(() => buildSchemaSync({
    resolvers: [...modules.flatMap((m) => m.resolvers), ...modules.flatMap((m) => m.versioned ?? []).map(versionResolver)] as Resolvers,
    authChecker,
    validate: false,
    scalarsMap: [{ type: Date, scalar: DateTimeISO }],
    // Subscriptions bring their own source (the events module's hub); type-graphql insists on a pubSub.
    pubSub: {
      publish: () => undefined,
      subscribe: () => {
        throw new Error('subscriptions use their own event source');
      },
    },
  }));
  return cached;
}

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(buildSchema())) + '\n';
}
