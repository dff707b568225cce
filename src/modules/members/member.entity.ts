import { Entity, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

@ObjectType({ description: 'A member of a community.', simpleResolvers: true })
@Entity({ tableName: 'members' })
// What the composite tenant keys of its children reference (docs/scaling.md).
@Unique({ name: 'members_community_id_id_unique', properties: ['communityId', 'id'] })
export class Member extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt';

  @Field(() => String, { nullable: true })
  @Property({ length: 128, nullable: true })
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ length: 256, nullable: true })
  firstName?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ length: 256, nullable: true })
  lastName?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ length: 320, nullable: true })
  emailAddress?: string | null;
}

/** One member's value for one additional field; `id` is the additional field's id (as in REST). */
@ObjectType({ description: "A member's value for one additional field of the community." }) // not simpleResolvers: its id field reads fieldId
@Entity({ tableName: 'member_field_values' })
export class MemberFieldValue {
  @PrimaryKey({ type: 'uuid' })
  memberId!: string;

  /** The member's community (composite keys: src/db/migrations/Migration20261124300000_tenant_keys.ts). */
  @Property({ type: 'uuid' })
  communityId!: string;

  @Field(() => ID, { name: 'id', description: 'The id of the additional field.' })
  @PrimaryKey({ type: 'uuid' })
  fieldId!: string;

  @Field({ description: 'At most 2048 characters.' })
  @Property({ type: 'text' })
  value!: string;

  /**
   * The member's createdAt, copied when the value is written (it never changes): the field
   * filter's index holds the members' page order (Migration20261125110000). Not in the API.
   */
  @Property({ type: 'timestamptz', length: 3 })
  memberCreatedAt!: Date;
}
