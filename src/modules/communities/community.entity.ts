import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../../common/ids';

@ObjectType({ description: 'A tenant: every other record belongs to exactly one community.', simpleResolvers: true })
@Entity({ tableName: 'communities' })
export class Community {
  [OptionalProps]?: 'createdAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Field()
  @Property({ length: 256 })
  name!: string;

  @Field()
  @Property({ type: 'timestamptz', length: 3 })
  createdAt: Date = new Date();
}
