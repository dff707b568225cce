import type { EntityManager } from '@mikro-orm/postgresql';
import { asOwner } from '../../db/tenancy';
import { SECRET_BOX } from '../../security/secret-box';
import type { FeatureModule } from '../module';
import { DELIVER_WEBHOOK, deliverWebhookTask, DISPATCH_WEBHOOKS, dispatchWebhooksTask } from './delivery.task';
import { WebhookDelivery, WebhookEndpoint } from './webhook.entity';
import { webhookRoutes } from './webhook.rest';
import { WebhookDeliveryResolver, WebhookResolver } from './webhook.resolver';
import { resealWebhookSecrets } from './webhook-secrets';

export const webhooksModule: FeatureModule = {
  resolvers: [WebhookResolver, WebhookDeliveryResolver],
  routes: webhookRoutes,
  entities: [WebhookEndpoint, WebhookDelivery],
  tasks: { [DISPATCH_WEBHOOKS]: dispatchWebhooksTask, [DELIVER_WEBHOOK]: deliverWebhookTask },
  // Secrets written before encryption existed are sealed before the service serves (docs/security.md).
  async start({ orm, logger, state }) {
    const sealed = await asOwner('module start: seal plaintext webhook secrets of every community', logger, () =>
      resealWebhookSecrets(orm.em.fork() as EntityManager, state.get(SECRET_BOX), 'plaintext'),
    );
    if (sealed.resealed) logger.info(sealed, 'secrets at rest: sealed plaintext webhook secrets');
  },
};
