import { Field, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { IMPORT_ROWS, MEMBER, Rule } from '../../common/rules';
import { GROUP } from '../groups/group.inputs';

/**
 * Import rows: ApiGroupInput / member fields with `externalId` required (it is the upsert
 * key). A field left out keeps the current value of an existing record (default when new);
 * the business rules of each row are checked by the job, and a bad row becomes a row error.
 * That is why the rows carry examples but no limits in the OpenAPI document: a value outside
 * the rules is not a 400 here but a row error of the job.
 */
@InputType({ description: 'One group to create or update, matched by externalId.' })
@Rule({ name: 'ApiGroupImportRow', example: { externalId: GROUP.externalId.example, name: GROUP.name.example, color: GROUP.color.example } })
export class GroupImportRow {
  @Field({ description: 'Required: the upsert key.' })
  externalId!: string;

  @Field(() => String, { nullable: true, description: '1-256 characters; required when the group is new.' })
  name?: string | null;

  @Field(() => String, { nullable: true })
  about?: string | null;

  @Field(() => String, { nullable: true, description: '#RRGGBB' })
  color?: string | null;

  @Field(() => Boolean, { nullable: true })
  isVisibleInApp?: boolean | null;
}

@InputType({ description: 'Groups to upsert by externalId (JSON body `{ "groups": [...] }` or a CSV with a header row).' })
@Rule({ name: 'ApiGroupImportInput' })
export class GroupImportInput {
  @Field(() => [GroupImportRow])
  @Rule(IMPORT_ROWS)
  groups!: GroupImportRow[];
}

@InputType({ description: 'One member to create or update, matched by externalId.' })
@Rule({
  name: 'ApiMemberImportRow',
  example: { externalId: MEMBER.externalId.example, firstName: 'Ada', lastName: 'Lovelace', groupExternalIds: [GROUP.externalId.example] },
})
export class MemberImportRow {
  @Field({ description: 'Required: the upsert key.' })
  externalId!: string;

  @Field(() => String, { nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  lastName?: string | null;

  @Field(() => String, { nullable: true, description: 'A valid address, unique in the community.' })
  emailAddress?: string | null;

  @Field(() => [String], {
    nullable: true,
    description: 'externalIds of groups to add the member to (appended at the end; existing memberships stay). CSV: separated by `;`.',
  })
  groupExternalIds?: string[] | null;
}

@InputType({ description: 'Members to upsert by externalId (JSON body `{ "members": [...] }` or a CSV with a header row).' })
@Rule({ name: 'ApiMemberImportInput' })
export class MemberImportInput {
  @Field(() => [MemberImportRow])
  @Rule(IMPORT_ROWS)
  members!: MemberImportRow[];
}

export enum ImportJobSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
}
export const ImportJobListArgs = sortableArgs('ImportJob', ImportJobSortField);
export type ImportJobListArgs = InstanceType<typeof ImportJobListArgs>;
