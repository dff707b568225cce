import { Entity, Enum, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';

export enum MembershipRole {
  MEMBER = 'MEMBER',
  ADMIN = 'ADMIN',
}
registerEnumType(MembershipRole, { name: 'MembershipRole' });

@ObjectType({ description: 'The link of one member to one group, with a title, a role and an order number.' })
@Entity({ tableName: 'group_memberships' })
export class GroupMembership {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'role';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Property({ type: 'uuid' })
  communityId!: string;

  @Property({ type: 'uuid' })
  groupId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  memberId!: string;

  @Field(() => String, { nullable: true })
  @Property({ length: 128, nullable: true })
  externalId?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ length: 256, nullable: true })
  title?: string | null;

  @Field(() => MembershipRole)
  @Enum({ items: () => MembershipRole })
  role: MembershipRole = MembershipRole.MEMBER;

  @Field(() => Int)
  @Property({ type: 'integer' })
  orderNumber!: number;

  @Field()
  @Property({ type: 'timestamptz', length: 3 })
  createdAt: Date = new Date();

  @Field()
  @Property({ type: 'timestamptz', length: 3 })
  modifiedAt: Date = new Date();
}
