import { PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../common/ids';

/**
 * What every record a community owns has: a time-ordered id, the tenant, and the two
 * timestamps (millisecond precision, equal at creation). Subclasses list `createdAt` and
 * `modifiedAt` in their `[OptionalProps]`.
 */
@ObjectType({ simpleResolvers: true })
export abstract class TenantRecord {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Property({ type: 'uuid' })
  communityId!: string;

  @Field()
  @Property({ type: 'timestamptz', length: 3 })
  createdAt: Date = new Date();

  /** Set by MikroORM on every flush that changes the row; set-based SQL writers set it themselves. */
  @Field()
  @Property({ type: 'timestamptz', length: 3, onUpdate: () => new Date() })
  modifiedAt: Date = this.createdAt;
}
