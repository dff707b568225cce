import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';
import { Rule, WEBHOOK } from '../../common/rules';

@InputType({ description: 'Webhook endpoints are addressed by their service id only.' })
export class WebhookEndpointRef {
  @Field(() => ID)
  id!: string;
}

@InputType({ description: 'ApiWebhookEndpointInput: where to POST which events.' })
@Rule({ name: 'ApiWebhookEndpointInput' })
export class CreateWebhookEndpointInput {
  @Field({ description: 'An absolute http:// or https:// URL, at most 2048 characters; private, loopback and link-local destinations are refused.' })
  @Rule(WEBHOOK.url)
  url!: string;

  @Field(() => [String], { description: 'Event types, or ["*"] for every type.' })
  @Rule(WEBHOOK.events)
  events!: string[];

  @Field(() => String, { nullable: true, description: 'At most 1024 characters.' })
  @Rule(WEBHOOK.description)
  description?: string | null;
}

@InputType({ description: 'ApiWebhookEndpointPatchInput: only the given fields change.' })
@Rule({ name: 'ApiWebhookEndpointPatchInput', example: { description: 'On-call team: failed imports', enabled: true } })
export class UpdateWebhookEndpointInput {
  @Field(() => String, { nullable: true, description: 'As on creation; not null.' })
  @Rule(WEBHOOK.url)
  url?: string | null;

  @Field(() => [String], { nullable: true, description: 'As on creation; not null.' })
  @Rule(WEBHOOK.events)
  events?: string[] | null;

  @Field(() => String, { nullable: true, description: 'At most 1024 characters; null clears it.' })
  @Rule(WEBHOOK.description)
  description?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'true re-enables an endpoint the service disabled; not null.' })
  @Rule(WEBHOOK.enabled)
  enabled?: boolean | null;
}

export enum WebhookEndpointSortField {
  createdAt = 'createdAt',
  modifiedAt = 'modifiedAt',
}
export const WebhookEndpointListArgs = sortableArgs('WebhookEndpoint', WebhookEndpointSortField);
export type WebhookEndpointListArgs = InstanceType<typeof WebhookEndpointListArgs>;

export enum WebhookDeliverySortField {
  createdAt = 'createdAt',
}
export const WebhookDeliveryListArgs = sortableArgs('WebhookDelivery', WebhookDeliverySortField);
export type WebhookDeliveryListArgs = InstanceType<typeof WebhookDeliveryListArgs>;
