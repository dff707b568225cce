import type { FeatureModule } from '../module';
import { DELIVER_WEBHOOK, deliverWebhookTask, DISPATCH_WEBHOOKS, dispatchWebhooksTask } from './delivery.task';
import { WebhookDelivery, WebhookEndpoint } from './webhook.entity';
import { webhookRoutes } from './webhook.rest';
import { WebhookDeliveryResolver, WebhookResolver } from './webhook.resolver';

export const webhooksModule: FeatureModule = {
  resolvers: [WebhookResolver, WebhookDeliveryResolver],
  routes: webhookRoutes,
  entities: [WebhookEndpoint, WebhookDelivery],
  tasks: { [DISPATCH_WEBHOOKS]: dispatchWebhooksTask, [DELIVER_WEBHOOK]: deliverWebhookTask },
};
