import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { Community, type Context } from '../../context';
import { NestedPageArgs } from '../notifications/notification.inputs';
import { ImportJob, ImportKind, ImportRowError } from './import-job.entity';
import { GroupImportInput, ImportJobListArgs, MemberImportInput } from './import.inputs';
import { ImportService } from './import.service';
import type { Parent } from '../../graphql/parent';

const ImportJobPage = pageOf(ImportJob, 'ImportJob');
const ImportRowErrorPage = pageOf(ImportRowError, 'ImportRowError');

@Resolver(() => ImportJob)
export class ImportResolver {
  @Authorized('triggers:write')
  @Mutation(() => ImportJob, { description: 'Queues an upsert of groups by externalId; read its progress with importJob(id).' })
  importGroups(@Arg('input', () => GroupImportInput) input: GroupImportInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(ImportService).start(communityId, ImportKind.GROUPS, 'groups', input.groups);
  }

  @Authorized('triggers:write')
  @Mutation(() => ImportJob, { description: 'Queues an upsert of members by externalId (and memberships from groupExternalIds).' })
  importMembers(@Arg('input', () => MemberImportInput) input: MemberImportInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(ImportService).start(communityId, ImportKind.MEMBERS, 'members', input.members);
  }

  @Authorized('triggers:read')
  @Query(() => ImportJob, { description: 'One import job of the caller\'s community; NOT_FOUND when missing.' })
  importJob(@Arg('id', () => ID) id: string, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(ImportService).read(communityId, id);
  }

  @Authorized('triggers:read')
  @Query(() => ImportJobPage, { description: 'Import jobs of the caller\'s community, oldest first.' })
  importJobs(@Args(() => ImportJobListArgs) args: ImportJobListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(ImportService).list(communityId, args);
  }

  @FieldResolver(() => ImportRowErrorPage, { description: 'Row errors ordered by row number; `failed` counts the rows they concern.' })
  errors(@Root() job: Parent<ImportJob>, @Args(() => NestedPageArgs) args: NestedPageArgs, @Ctx() ctx: Context) {
    return ctx.service(ImportService).errors(job, args);
  }
}
