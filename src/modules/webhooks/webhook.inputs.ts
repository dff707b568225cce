import { Field, ID, InputType } from 'type-graphql';
import { sortableArgs } from '../../common/pagination';

@InputType({ description: 'Webhook endpoints are addressed by their service id only.' })
export class WebhookEndpointRef {
  @Field(() => ID)
  id!: string;
}

@InputType()
export class CreateWebhookEndpointInput {
  @Field({ description: 'http or https address; private, loopback and link-local destinations are refused.' })
  url!: string;

  @Field(() => [String], { description: 'Event types, or ["*"] for every type.' })
  events!: string[];

  @Field(() => String, { nullable: true, description: 'At most 1024 characters.' })
  description?: string | null;
}

@InputType()
export class UpdateWebhookEndpointInput {
  @Field(() => String, { nullable: true })
  url?: string | null;

  @Field(() => [String], { nullable: true })
  events?: string[] | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'true re-enables an endpoint the service disabled.' })
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
