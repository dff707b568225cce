import { Entity, Enum, OptionalProps, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

export enum MembershipRole {
  MEMBER = 'MEMBER',
  ADMIN = 'ADMIN',
}
registerEnumType(MembershipRole, { name: 'MembershipRole' });

@ObjectType({ description: 'The link of one member to one group, with a title, a role and an order number.', simpleResolvers: true })
@Entity({ tableName: 'group_memberships' })
export class GroupMembership extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'role';

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
}
