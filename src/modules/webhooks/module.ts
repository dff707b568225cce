import type { FeatureModule } from '../module';
import { webhookRoutes } from './webhook.rest';
import { WebhookDeliveryResolver, WebhookResolver } from './webhook.resolver';

export const webhooksModule: FeatureModule = { resolvers: [WebhookResolver, WebhookDeliveryResolver], routes: webhookRoutes };
