import { Arg, Args, Authorized, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageOf } from '../../common/pagination';
import { Community, type Context } from '../../context';
import { CreatedWebhookEndpoint, RotatedWebhookSecret, WebhookDelivery, WebhookDeliveryAttempt, WebhookEndpoint } from './webhook.entity';
import {
  CreateWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  WebhookDeliveryListArgs,
  WebhookEndpointListArgs,
  WebhookEndpointRef,
} from './webhook.inputs';
import { WebhookService } from './webhook.service';
import type { Parent } from '../../graphql/parent';

export const WebhookEndpointPage = pageOf(WebhookEndpoint, 'WebhookEndpoint');
export const WebhookDeliveryPage = pageOf(WebhookDelivery, 'WebhookDelivery');

@Resolver(() => WebhookEndpoint)
export class WebhookResolver {
  @Authorized('webhooks:read')
  @Query(() => WebhookEndpointPage, { description: 'Webhook endpoints of the caller\'s community, one page.' })
  webhookEndpoints(@Args(() => WebhookEndpointListArgs) args: WebhookEndpointListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).list(communityId, args);
  }

  @Authorized('webhooks:read')
  @Query(() => WebhookEndpoint)
  webhookEndpoint(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).read(communityId, ref.id);
  }

  @Authorized('webhooks:read')
  @Query(() => WebhookDeliveryPage, { description: 'Deliveries to one endpoint, one page: every event, its attempts and its state.' })
  webhookDeliveries(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Args(() => WebhookDeliveryListArgs) args: WebhookDeliveryListArgs, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).deliveries(communityId, ref.id, args);
  }

  @Authorized('webhooks:write')
  @Mutation(() => CreatedWebhookEndpoint)
  createWebhookEndpoint(@Arg('input', () => CreateWebhookEndpointInput) input: CreateWebhookEndpointInput, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).create(communityId, input);
  }

  @Authorized('webhooks:write')
  @Mutation(() => WebhookEndpoint)
  updateWebhookEndpoint(
    @Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef,
    @Arg('input', () => UpdateWebhookEndpointInput) input: UpdateWebhookEndpointInput,
    @Community() communityId: string,
    @Ctx() ctx: Context,
  ) {
    return ctx.service(WebhookService).update(communityId, ref.id, input);
  }

  @Authorized('webhooks:write')
  @Mutation(() => RotatedWebhookSecret, { description: 'A new signing secret, shown only here; the former one also signs for 24 hours (deliveries carry both signatures, new first).' })
  rotateWebhookSecret(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).rotateSecret(communityId, ref.id);
  }

  @Authorized('webhooks:write')
  @Mutation(() => Boolean)
  deleteWebhookEndpoint(@Arg('ref', () => WebhookEndpointRef) ref: WebhookEndpointRef, @Community() communityId: string, @Ctx() ctx: Context) {
    return ctx.service(WebhookService).remove(communityId, ref.id);
  }

  @FieldResolver(() => String, { nullable: true, description: 'Always null: endpoints have no externalId.' })
  externalId(): null {
    return null;
  }
}

@Resolver(() => WebhookDelivery)
export class WebhookDeliveryResolver {
  @FieldResolver(() => [WebhookDeliveryAttempt], { description: 'Every attempt of this delivery, oldest first.' })
  async attemptLog(@Root() delivery: Parent<WebhookDelivery>, @Community() communityId: string, @Ctx() ctx: Context): Promise<WebhookDeliveryAttempt[]> {
    const rows = await ctx.em.execute<{ attempted_at: Date; response_status: number | null; error: string | null; duration_ms: number }[]>(
      `select a.attempted_at, a.response_status, a.error, a.duration_ms from webhook_delivery_attempts a
         join webhook_deliveries d on d.id = a.delivery_id
        where a.delivery_id = ? and d.community_id = ? order by a.id`,
      [delivery.id, communityId],
    );
    return rows.map((r) => ({ attemptedAt: new Date(r.attempted_at), responseStatus: r.response_status, error: r.error, durationMs: r.duration_ms }));
  }
}
