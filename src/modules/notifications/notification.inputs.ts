import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { DEFAULT_LIMIT, MAX_LIMIT, sortableArgs } from '../../common/pagination';
import { EXAMPLE_IDS, NOTIFICATION, Rule } from '../../common/rules';
import { NotificationStatus } from './notification.entity';

@InputType({ description: 'A notification for chosen members: sent at once, or at a future sendAt.' })
@Rule({
  name: 'ApiNotificationInput',
  anyOf: [['memberIds'], ['memberExternalIds']],
  example: { title: NOTIFICATION.title.example, message: NOTIFICATION.message.example, memberExternalIds: ['ada-lovelace'] },
})
export class CreateNotificationInput {
  @Field({ description: '1-256 characters.' })
  @Rule(NOTIFICATION.title)
  title!: string;

  @Field({ description: '1-10000 characters.' })
  @Rule(NOTIFICATION.message)
  message!: string;

  @Field(() => [ID], {
    nullable: true,
    description: 'Recipients by id. With memberExternalIds: at least one recipient, at most 10000 together. null: none.',
  })
  @Rule({ ...NOTIFICATION.recipients, example: [EXAMPLE_IDS.member] })
  memberIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Recipients by externalId. null: none.' })
  @Rule({ ...NOTIFICATION.recipients, example: ['ada-lovelace'] })
  memberExternalIds?: string[] | null;

  @Field(() => Date, { nullable: true, description: 'Absent, null or not in the future: sent now. Future: scheduled.' })
  @Rule({ kind: 'value', example: '2030-01-01T09:00:00.000Z' })
  sendAt?: Date | null;
}

export enum NotificationSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
  sendAt = 'sendAt',
}
const SortableNotificationArgs = sortableArgs('Notification', NotificationSortField);

@ArgsType()
export class NotificationListArgs extends SortableNotificationArgs {
  @Field(() => NotificationStatus, { nullable: true, description: 'Only notifications in this status.' })
  status?: NotificationStatus | null;
}

/** limit/skip of a nested list (deliveries, a member's notifications). */
@ArgsType()
export class NestedPageArgs {
  @Field(() => Int, { nullable: true, description: `1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}.` })
  limit?: number;

  @Field(() => Int, { nullable: true, description: 'Zero-based offset, default 0.' })
  skip?: number;
}
