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

/** One member's value for one additional field, as stored (the API's shape is MemberFieldValueView). */
@Entity({ tableName: 'member_field_values' })
export class MemberFieldValue {
  @PrimaryKey({ type: 'uuid' })
  memberId!: string;

  /** The member's community (composite keys: src/db/migrations/Migration20261124300000_tenant_keys.ts). */
  @Property({ type: 'uuid' })
  communityId!: string;

  @PrimaryKey({ type: 'uuid' })
  fieldId!: string;

  @Property({ type: 'text' })
  value!: string;

  /**
   * The member's createdAt, copied when the value is written (it never changes): the field
   * filter's index holds the members' page order (Migration20261125110000). Not in the API.
   */
  @Property({ type: 'timestamptz', length: 3 })
  memberCreatedAt!: Date;
}

/**
 * One member's value for one additional field as the API reads it: the row of the value
 * loader (`id` is the additional field's id, as in REST; `memberId` groups a batch), not an
 * entity, and with graphql's default resolvers (simpleResolvers). As MikroORM entities whose
 * `id` field read `fieldId`, a page of 100 members with 20 values each built 2,000 entity
 * wrappers and called a resolver with its own info object per value (docs/performance.md,
 * "Decisions").
 */
@ObjectType('MemberFieldValue', { description: "A member's value for one additional field of the community.", simpleResolvers: true })
export class MemberFieldValueView {
  @Field(() => ID, { description: 'The id of the additional field.' })
  id!: string;

  @Field({ description: 'At most 2048 characters.' })
  value!: string;

  memberId!: string;
}
