import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { DEFAULT_LIMIT, MAX_LIMIT, sortableArgs } from '../../common/pagination';
import { NotificationStatus } from './notification.entity';

@InputType({ description: 'A notification for chosen members: sent at once, or at a future sendAt.' })
export class CreateNotificationInput {
  @Field({ description: '1-256 characters.' })
  title!: string;

  @Field({ description: '1-10000 characters.' })
  message!: string;

  @Field(() => [ID], { nullable: true, description: 'Recipients by id. With memberExternalIds: at least one recipient, at most 10000.' })
  memberIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Recipients by externalId.' })
  memberExternalIds?: string[] | null;

  @Field(() => Date, { nullable: true, description: 'Absent or not in the future: sent now. Future: scheduled.' })
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
