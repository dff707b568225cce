import { Arg, Args, Authorized, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { communityOf, type Context } from '../../context';
import { CreatedWebhookEndpoint, RotatedWebhookSecret, WebhookDelivery, WebhookDeliveryAttempt, WebhookEndpoint } from './webhook.entity';
import {
  CreateWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  WebhookDeliveryListArgs,
  WebhookEndpointListArgs,
  WebhookEndpointRef,
} from './webhook.inputs';
import { WebhookService } from './webhook.service';

export const WebhookEndpointPage = pageOf(WebhookEndpoint, 'WebhookEndpoint');
export const WebhookDeliveryPage = pageOf(WebhookDelivery, 'WebhookDelivery');

@Resolver(() => WebhookEndpoint)
export class WebhookResolver {
  @Authorized('webhooks:read')
  @Query(() => WebhookEndpointPage, { description: 'Webhook endpoints of the caller\'s community, one page.' })
  webhookEndpoints(@Args(() => WebhookEndpointListArgs) args: WebhookEndpointListArgs, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).list(communityOf(ctx), args);
  }

  @Authorized('webhooks:read')
  @Query(() => WebhookEndpoint)
  webhookEndpoint(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).get(communityOf(ctx), ref.id, true);
  }

  @Authorized('webhooks:read')
  @Query(() => WebhookDeliveryPage, { description: 'Deliveries to one endpoint, one page: every event, its attempts and its state.' })
  webhookDeliveries(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Args(() => WebhookDeliveryListArgs) args: WebhookDeliveryListArgs, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).deliveries(communityOf(ctx), ref.id, args);
  }

  @Authorized('webhooks:write')
  @Mutation(() => CreatedWebhookEndpoint)
  createWebhookEndpoint(@Arg('input', () => CreateWebhookEndpointInput) input: CreateWebhookEndpointInput, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).create(communityOf(ctx), input);
  }

  @Authorized('webhooks:write')
  @Mutation(() => WebhookEndpoint)
  updateWebhookEndpoint(
    @Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef,
    @Arg('input', () => UpdateWebhookEndpointInput) input: UpdateWebhookEndpointInput,
    @Ctx() ctx: Context,
  ) {
    return new WebhookService(ctx.em).update(communityOf(ctx), ref.id, input);
  }

  @Authorized('webhooks:write')
  @Mutation(() => RotatedWebhookSecret, { description: 'A new signing secret, shown only here; the former one also signs for 24 hours (deliveries carry both signatures, new first).' })
  rotateWebhookSecret(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).rotateSecret(communityOf(ctx), ref.id);
  }

  @Authorized('webhooks:write')
  @Mutation(() => Boolean)
  deleteWebhookEndpoint(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Ctx() ctx: Context) {
    return new WebhookService(ctx.em).remove(communityOf(ctx), ref.id);
  }

  @FieldResolver(() => String, { nullable: true, description: 'Always null: endpoints have no externalId.' })
  externalId(): null {
    return null;
  }
}

@Resolver(() => WebhookDelivery)
export class WebhookDeliveryResolver {
  @FieldResolver(() => [WebhookDeliveryAttempt], { description: 'Every attempt of this delivery, oldest first.' })
  async attemptLog(@Root() delivery: WebhookDelivery, @Ctx() ctx: Context): Promise<WebhookDeliveryAttempt[]> {
    const rows = await ctx.em.execute<{ attempted_at: Date; response_status: number | null; error: string | null; duration_ms: number }[]>(
      `select a.attempted_at, a.response_status, a.error, a.duration_ms from webhook_delivery_attempts a
         join webhook_deliveries d on d.id = a.delivery_id
        where a.delivery_id = ? and d.community_id = ? order by a.id`,
      [delivery.id, communityOf(ctx)],
    );
    return rows.map((r) => ({ attemptedAt: new Date(r.attempted_at), responseStatus: r.response_status, error: r.error, durationMs: r.duration_ms }));
  }
}
