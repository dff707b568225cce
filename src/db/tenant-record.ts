import { PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../common/ids';
import { VERSION_COLUMN } from './version';

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

  /**
   * The row version (src/db/version.ts), read with the row: never written, and stale on an
   * entity the request changed (the GraphQL `version` of a mutation's answer reads it again).
   */
  @Property({ type: 'text', formula: (table) => VERSION_COLUMN(table.alias), persist: false })
  version?: string;
}
