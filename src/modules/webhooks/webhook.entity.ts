import { Entity, Enum, Index, OptionalProps, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantRecord } from '../../db/tenant-record';

@ObjectType({ description: 'Where events are POSTed, signed per Standard Webhooks. The secret is shown only at creation.', simpleResolvers: true })
@Entity({ tableName: 'webhook_endpoints' })
// What the composite tenant keys of its children reference (docs/scaling.md).
@Unique({ name: 'webhook_endpoints_community_id_id_unique', properties: ['communityId', 'id'] })
@Index({ name: 'webhook_endpoints_community_created_idx', properties: ['communityId', 'createdAt', 'id'] })
export class WebhookEndpoint extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'enabled' | 'disabledReason' | 'failingSince' | 'description' | 'previousSecret' | 'previousSecretUntil';

  @Field({ description: 'http(s) address the events are POSTed to.' })
  @Property({ type: 'text' })
  url!: string;

  @Field(() => [String], { description: 'Event types delivered here, or ["*"] for all.' })
  @Property({ type: 'text[]' })
  events!: string[];

  @Field(() => String, { nullable: true })
  @Property({ length: 1024, nullable: true })
  description?: string | null;

  /** Sealed (`enc1:...`, webhook-secrets.ts); never a plaintext secret. */
  @Property({ type: 'text', hidden: true })
  secret!: string;

  /** After a rotation: the former secret, sealed, which also signs until `previousSecretUntil`. */
  @Property({ type: 'text', hidden: true, nullable: true })
  previousSecret?: string | null;

  @Property({ type: 'timestamptz', length: 3, nullable: true, hidden: true })
  previousSecretUntil?: Date | null;

  @Field()
  @Property({ type: 'boolean' })
  enabled: boolean = true;

  @Field(() => String, { nullable: true, description: 'Why the service disabled the endpoint (no success for 5 days).' })
  @Property({ type: 'text', nullable: true })
  disabledReason?: string | null;

  @Property({ type: 'timestamptz', length: 3, nullable: true })
  failingSince?: Date | null;
}

export enum DeliveryStatus {
  PENDING = 'PENDING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
}
registerEnumType(DeliveryStatus, { name: 'WebhookDeliveryStatus' });

@ObjectType({ description: 'One event for one endpoint: its attempts so far and what comes next.', simpleResolvers: true })
@Entity({ tableName: 'webhook_deliveries' })
@Index({ name: 'webhook_deliveries_endpoint_created_idx', properties: ['endpointId', 'createdAt', 'id'] })
export class WebhookDelivery extends TenantRecord {
  [OptionalProps]?: 'createdAt' | 'modifiedAt' | 'status' | 'attempts' | 'responseStatus' | 'lastError' | 'nextAttemptAt';

  @Property({ type: 'uuid' })
  endpointId!: string;

  @Field(() => ID, { description: 'The event; also the webhook-id header of every attempt.' })
  @Property({ type: 'uuid' })
  eventId!: string;

  @Field()
  @Property({ type: 'text' })
  type!: string;

  /** The exact body of every attempt. */
  @Property({ type: 'text', hidden: true })
  payload!: string;

  @Field(() => DeliveryStatus)
  @Enum({ items: () => DeliveryStatus, nativeEnumName: undefined })
  status: DeliveryStatus = DeliveryStatus.PENDING;

  @Field(() => Int, { description: 'Attempts made so far.' })
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Field(() => Int, { nullable: true, description: 'HTTP status of the last attempt; null when no answer came.' })
  @Property({ type: 'integer', nullable: true })
  responseStatus?: number | null;

  @Field(() => String, { nullable: true, description: 'Why the last attempt failed, when it did.' })
  @Property({ type: 'text', nullable: true })
  lastError?: string | null;

  @Field(() => Date, { nullable: true, description: 'When the next attempt is due; null once SUCCEEDED or FAILED.' })
  @Property({ type: 'timestamptz', length: 3, nullable: true })
  nextAttemptAt?: Date | null;
}

@ObjectType({ description: 'A new endpoint with its signing secret (whsec_...), shown only here.' })
export class CreatedWebhookEndpoint {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'Always null: endpoints have no externalId.' })
  externalId!: null;

  @Field({ description: '`whsec_` + base64 of 24 random bytes; verify signatures with it.' })
  secret!: string;
}

@ObjectType({ description: 'A rotated endpoint\'s new signing secret (whsec_...), shown only here. For 24 hours deliveries carry the signatures of both the new and the former secret, new first.' })
export class RotatedWebhookSecret {
  @Field(() => ID)
  id!: string;

  @Field({ description: '`whsec_` + base64 of 24 random bytes; verify signatures with it.' })
  secret!: string;
}

@ObjectType({ description: 'One attempt of a delivery, as it happened.' })
export class WebhookDeliveryAttempt {
  @Field()
  attemptedAt!: Date;

  @Field(() => Int, { nullable: true, description: 'null when no answer came.' })
  responseStatus!: number | null;

  @Field(() => String, { nullable: true, description: 'Why the attempt failed, when it did.' })
  error!: string | null;

  @Field(() => Int)
  durationMs!: number;
}
