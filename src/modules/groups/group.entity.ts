import { Entity, OptionalProps, Enum, Index, Property, Unique } from '@mikro-orm/core';
import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

export enum GroupState {
  ORIGINAL = 'ORIGINAL',
  ARCHIVED = 'ARCHIVED',
}
registerEnumType(GroupState, { name: 'GroupState', description: 'ORIGINAL on creation; archive/restore move between the two.' });

@ObjectType({ description: 'A named group of a community, with an ordered list of memberships.', simpleResolvers: true })
@Entity({ tableName: 'groups' })
// What the composite tenant keys of its children reference (docs/scaling.md).
@Unique({ name: 'groups_community_id_id_unique', properties: ['communityId', 'id'] })
@Unique({ name: 'groups_community_external_id_unique', properties: ['communityId', 'externalId'] })
@Index({ name: 'groups_community_created_idx', properties: ['communityId', 'createdAt', 'id'] })
export class Group extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'membershipCount' | 'state' | 'isVisibleInApp';

  @Field(() => String, { nullable: true })
  @Property({ length: 128, nullable: true })
  externalId?: string | null;

  @Field()
  @Property({ length: 256 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  about?: string | null;

  @Field(() => String, { nullable: true, description: 'A hash sign followed by six hexadecimal digits.' })
  @Property({ length: 7, nullable: true })
  color?: string | null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  membershipCount: number = 0;

  @Field()
  @Property({ type: 'boolean' })
  isVisibleInApp: boolean = true;

  @Field(() => GroupState)
  @Enum({ items: () => GroupState, nativeEnumName: undefined })
  state: GroupState = GroupState.ORIGINAL;
}
