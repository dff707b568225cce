import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { Community, type Context } from '../../context';
import { Member } from '../members/member.entity';
import { Notification, NotificationDelivery } from './notification.entity';
import { CreateNotificationInput, NestedPageArgs, NotificationListArgs } from './notification.inputs';
import { memberById } from '../members/member.loaders';
import { deliveryPages, memberNotificationPages } from './notification.loaders';
import { NotificationService } from './notification.service';
import type { Parent } from '../../graphql/parent';

export const NotificationPage = pageOf(Notification, 'Notification');
export const NotificationDeliveryPage = pageOf(NotificationDelivery, 'NotificationDelivery');

@Resolver(() => Notification)
export class NotificationResolver {
  @Authorized('notifications:read')
  @Query(() => NotificationPage, { description: 'Notifications of the caller\'s community, one page.' })
  notifications(@Args(() => NotificationListArgs) args: NotificationListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(NotificationService).list(communityId, args);
  }

  @Authorized('notifications:read')
  @Query(() => Notification, { description: 'One notification; NOT_FOUND when missing.' })
  notification(@Arg('id', () => ID) id: string, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(NotificationService).read(communityId, id);
  }

  @Authorized('notifications:write')
  @Mutation(() => Notification, { description: 'Sends now (status SENT) or schedules for a future sendAt (SCHEDULED).' })
  createNotification(@Arg('input', () => CreateNotificationInput) input: CreateNotificationInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(NotificationService).create(communityId, input);
  }

  @Authorized('notifications:write')
  @Mutation(() => Notification, { description: 'Cancels a SCHEDULED notification (it is never sent); CONFLICT when already SENT.' })
  cancelNotification(@Arg('id', () => ID) id: string, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(NotificationService).cancel(communityId, id);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'Always null: notifications have no externalId (REST answers an ApiInsertResponse).',
  })
  externalId(): null {
    return null;
  }

  @FieldResolver(() => NotificationDeliveryPage, { description: 'One delivery per recipient once SENT; ordered by deliveredAt, then id.' })
  deliveries(@Root() notification: Parent<Notification>, @Args(() => NestedPageArgs) args: NestedPageArgs, @Ctx() ctx: Context) {
    return ctx.loaders.get(deliveryPages)(args).load(notification.id);
  }
}

@Resolver(() => NotificationDelivery)
export class NotificationDeliveryResolver {
  @Authorized('members:read')
  @FieldResolver(() => Member, { nullable: true, description: 'The recipient (needs members:read).' })
  member(@Root() delivery: Parent<NotificationDelivery>, @Ctx() ctx: Context) {
    return ctx.loaders.get(memberById).load(delivery.memberId);
  }
}

/** Member.notifications lives here so the members module needs no knowledge of notifications. */
@Resolver(() => Member)
export class MemberNotificationsResolver {
  @Authorized('notifications:read')
  @FieldResolver(() => NotificationPage, { description: 'Notifications addressed to this member, oldest first (needs notifications:read).' })
  notifications(@Root() member: Parent<Member>, @Args(() => NestedPageArgs) args: NestedPageArgs, @Ctx() ctx: Context) {
    return ctx.loaders.get(memberNotificationPages)(args).load(member.id);
  }
}
