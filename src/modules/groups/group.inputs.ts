import { ArgsType, Field, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { EXTERNAL_ID, MAX_SEARCH_TEXT, NAME, Rule, SEARCH, text, value } from '../../common/rules';

/**
 * The rules of a group's fields, declared once: the input types below carry them (`@Rule`),
 * the service checks a body with them (ruleIssues) and the OpenAPI document shows them.
 */
export const GROUP = {
  externalId: { ...EXTERNAL_ID, example: 'team-berlin' },
  name: { ...NAME, example: 'Team Berlin' },
  about: text({ max: 2048, nullable: true, example: 'Everyone working in the Berlin office.' }),
  color: text({ max: 7, pattern: /^#[0-9A-Fa-f]{6}$/, patternText: '#RRGGBB (six hexadecimal digits)', nullable: true, example: '#1E90FF' }),
  isVisibleInApp: value({ nullable: false, default: true, example: true }),
};

@InputType({ description: 'ApiGroupInput for creation.' })
@Rule({ name: 'ApiGroupInput' })
export class CreateGroupInput {
  @Field(() => String, { nullable: true, description: '1-128 of A-Z a-z 0-9 @ _ . -; unique in the community. null: none.' })
  @Rule(GROUP.externalId)
  externalId?: string | null;

  @Field({ description: '1-256 characters.' })
  @Rule(GROUP.name)
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2048 characters.' })
  @Rule(GROUP.about)
  about?: string | null;

  @Field(() => String, { nullable: true, description: '#RRGGBB' })
  @Rule(GROUP.color)
  color?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true; not null.' })
  @Rule(GROUP.isVisibleInApp)
  isVisibleInApp?: boolean | null;
}

@InputType({ description: 'ApiGroupPatchInput: only the given fields change; null clears externalId, about and color.' })
@Rule({ name: 'ApiGroupPatchInput', example: { about: 'Everyone working in the Berlin office.' } })
export class UpdateGroupInput {
  @Field(() => String, { nullable: true, description: 'null removes the externalId.' })
  @Rule(GROUP.externalId)
  externalId?: string | null;

  @Field(() => String, { nullable: true, description: '1-256 characters; not null.' })
  @Rule(GROUP.name)
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(GROUP.about)
  about?: string | null;

  @Field(() => String, { nullable: true, description: 'null clears it.' })
  @Rule(GROUP.color)
  color?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Not null.' })
  @Rule({ ...GROUP.isVisibleInApp, default: undefined })
  isVisibleInApp?: boolean | null;
}

export enum GroupSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  name = 'name',
}

@InputType({ description: 'Finds groups: every given filter must match.' })
@Rule({ name: 'ApiGroupFilter' })
export class GroupFilter {
  @Field(() => String, {
    nullable: true,
    description: `1-${MAX_SEARCH_TEXT} characters after trimming: groups whose name or externalId contains the text, case-insensitive; % and _ are plain characters.`,
  })
  @Rule({ ...SEARCH.q, example: 'berl' })
  q?: string | null;
}

@ArgsType()
export class GroupListArgs extends sortableArgs('Group', GroupSortField, { modifiedSince: true }) {
  @Field(() => GroupFilter, { nullable: true, description: 'Only groups matching every given filter.' })
  filter?: GroupFilter | null;
}
