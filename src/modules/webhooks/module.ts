import type { FeatureModule } from '../module';
import { webhookRoutes } from './webhook.rest';
import { WebhookResolver } from './webhook.resolver';

export const webhooksModule: FeatureModule = { resolvers: [WebhookResolver], routes: webhookRoutes };
