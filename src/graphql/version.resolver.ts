import type { GraphQLResolveInfo } from 'graphql';
import { Ctx, FieldResolver, Info, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { VERSION_LOADERS, type VersionedTable } from '../db/version';
import { AdditionalField } from '../modules/additional-fields/additional-field.entity';
import { Group } from '../modules/groups/group.entity';
import { Member } from '../modules/members/member.entity';
import { GroupMembership } from '../modules/memberships/membership.entity';

const DESCRIPTION =
  'Opaque version of the record, new on every write of it (the REST ETag). Give it as `expectedVersion` ' +
  'to an update or delete to make it conditional: the write fails with PRECONDITION_FAILED when the record changed since.';

/** `version` on one record type: reads select it with the row (lean rows and entities alike); mutations look it up after their writes. */
function versionResolver(type: Function, table: VersionedTable) {
  @Resolver(() => type)
  class VersionResolver {
    @FieldResolver(() => String, { description: DESCRIPTION })
    async version(@Root() record: { id: string; version?: string }, @Ctx() ctx: Context, @Info() info: GraphQLResolveInfo): Promise<string> {
      // A mutation may have written the record after it was read: read the version again.
      if (record.version && info.operation.operation !== 'mutation') return record.version;
      return (await ctx.loaders.get(VERSION_LOADERS[table]).load(record.id)) ?? '';
    }
  }
  Object.defineProperty(VersionResolver, 'name', { value: `${type.name}VersionResolver` });
  return VersionResolver;
}

export const versionResolvers = [
  versionResolver(Group, 'groups'),
  versionResolver(Member, 'members'),
  versionResolver(GroupMembership, 'group_memberships'),
  versionResolver(AdditionalField, 'additional_fields'),
];
