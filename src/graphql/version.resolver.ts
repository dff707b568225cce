import type { EntityClass } from '@mikro-orm/core';
import type { GraphQLResolveInfo } from 'graphql';
import { Ctx, FieldResolver, Info, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { versionsById } from '../loaders';

const DESCRIPTION =
  'Opaque version of the record, new on every write of it (the REST ETag). Give it as `expectedVersion` ' +
  'to an update or delete to make it conditional: the write fails with PRECONDITION_FAILED when the record changed since.';

/**
 * `version` on one record type (a versioned entity, which is also its GraphQL object type):
 * reads select it with the row (lean rows and entities alike); mutations look it up after their writes.
 */
export function versionResolver(entity: EntityClass<object>) {
  @Resolver(() => entity)
  class VersionResolver {
    @FieldResolver(() => String, { description: DESCRIPTION })
    async version(@Root() record: { id: string; version?: string }, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo): Promise<string> {
      // A mutation may have written the record after it was read: read the version again.
      if (record.version && info.operation.operation !== 'mutation') return record.version;
      return (await ctx.loaders.get(versionsById(entity)).load(record.id)) ?? '';
    }
  }
  Object.defineProperty(VersionResolver, 'name', { value: `${entity.name}VersionResolver` });
  return VersionResolver;
}
