import { Entity, Enum, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantRecord } from '../../db/tenant-record';

export enum NotificationStatus {
  SCHEDULED = 'SCHEDULED',
  SENT = 'SENT',
  CANCELLED = 'CANCELLED',
}
registerEnumType(NotificationStatus, {
  name: 'NotificationStatus',
  description: 'SCHEDULED until sendAt; then SENT (deliveries written) unless CANCELLED before.',
});

@ObjectType({ description: 'A message to chosen members of the community, sent now or at sendAt.', simpleResolvers: true })
@Entity({ tableName: 'notifications' })
// What the composite tenant keys of its children reference (docs/scaling.md).
@Unique({ name: 'notifications_community_id_id_unique', properties: ['communityId', 'id'] })
export class Notification extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'status';

  @Field({ description: '1-256 characters.' })
  @Property({ length: 256 })
  title!: string;

  @Field({ description: '1-10000 characters.' })
  @Property({ type: 'text' })
  message!: string;

  @Field(() => NotificationStatus)
  @Enum({ items: () => NotificationStatus })
  status: NotificationStatus = NotificationStatus.SCHEDULED;

  @Field(() => Int, { description: 'Recipients: members named at creation that still exist; once SENT, the deliveries written.' })
  @Property({ type: 'integer' })
  receiversCount!: number;

  @Field({ description: 'The sendAt given (a past one was sent at once), or the creation time when none was given.' })
  @Property({ type: 'timestamptz', length: 3 })
  sendAt!: Date;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  sentAt?: Date | null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  cancelledAt?: Date | null;
}

/** A member a notification is addressed to; written with the notification. */
@Entity({ tableName: 'notification_recipients' })
export class NotificationRecipient {
  @PrimaryKey({ type: 'uuid' })
  notificationId!: string;

  /** The notification's community (composite keys: src/db/migrations/Migration20261124300000_tenant_keys.ts). */
  @Property({ type: 'uuid' })
  communityId!: string;

  @PrimaryKey({ type: 'uuid' })
  memberId!: string;
}

@ObjectType({ description: 'The record that a notification was sent to one member (one per recipient, exactly once).', simpleResolvers: true })
@Entity({ tableName: 'notification_deliveries' })
@Unique({ name: 'notification_deliveries_notification_member_unique', properties: ['communityId', 'notificationId', 'memberId'] })
export class NotificationDelivery {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Property({ type: 'uuid' })
  communityId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  notificationId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  memberId!: string;

  @Field()
  @Property({ type: 'timestamptz', length: 3 })
  deliveredAt!: Date;
}
