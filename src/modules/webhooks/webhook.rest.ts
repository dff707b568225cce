import { EXAMPLE_IDS } from '../../common/rules';
import type { RouteSpec } from '../../rest/route';

const ENDPOINT = `fragment WebhookEndpointFields on WebhookEndpoint {
  id externalId url events description enabled disabledReason createdAt modifiedAt
}`;
// Webhook endpoints are addressed by the service id only, no `key` (docs/api.md, Addressing).
const ref = { ref: { param: 'identifier', keyParam: null, example: EXAMPLE_IDS.webhookEndpoint } };

export const webhookRoutes: RouteSpec[] = [
  {
    operationId: 'getWebhookEndpoints',
    summary: 'Get webhook endpoints',
    method: 'GET',
    path: '/webhook_endpoints',
    resource: 'webhooks',
    status: 200,
    list: true,
    response: { name: 'ApiWebhookEndpointsResponse', item: 'ApiWebhookEndpointResponse' },
    document: `query getWebhookEndpoints($limit: Int, $skip: Int, $sort: [WebhookEndpointSort!]) {
      result: webhookEndpoints(limit: $limit, skip: $skip, sort: $sort) { results { ...WebhookEndpointFields } limit skip size hasNextPage }
    } ${ENDPOINT}`,
  },
  {
    operationId: 'addWebhookEndpoint',
    summary: 'Add webhook endpoint (answers its secret, once)',
    method: 'POST',
    path: '/webhook_endpoints',
    resource: 'webhooks',
    status: 201,
    body: 'input',
    response: { name: 'ApiWebhookEndpointCreatedResponse' },
    document: `mutation addWebhookEndpoint($input: CreateWebhookEndpointInput!) {
      result: createWebhookEndpoint(input: $input) { id externalId secret }
    }`,
  },
  {
    operationId: 'getWebhookEndpoint',
    summary: 'Get webhook endpoint',
    method: 'GET',
    path: '/webhook_endpoints/:identifier',
    resource: 'webhooks',
    status: 200,
    refs: ref,
    idOnly: true,
    response: { name: 'ApiWebhookEndpointResponse' },
    document: `query getWebhookEndpoint($ref: WebhookEndpointRef!) { result: webhookEndpoint(ref: $ref) { ...WebhookEndpointFields } } ${ENDPOINT}`,
  },
  {
    operationId: 'updateWebhookEndpoint',
    summary: 'Update webhook endpoint',
    method: 'PATCH',
    path: '/webhook_endpoints/:identifier',
    resource: 'webhooks',
    status: 204,
    refs: ref,
    idOnly: true,
    body: 'input',
    document: `mutation updateWebhookEndpoint($ref: WebhookEndpointRef!, $input: UpdateWebhookEndpointInput!) {
      result: updateWebhookEndpoint(ref: $ref, input: $input) { id }
    }`,
  },
  {
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete webhook endpoint',
    method: 'DELETE',
    path: '/webhook_endpoints/:identifier',
    resource: 'webhooks',
    status: 204,
    refs: ref,
    idOnly: true,
    document: `mutation deleteWebhookEndpoint($ref: WebhookEndpointRef!) { result: deleteWebhookEndpoint(ref: $ref) }`,
  },
  {
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate webhook secret (answers the new secret, once; both sign for 24 h)',
    method: 'POST',
    path: '/webhook_endpoints/:identifier/rotate_secret',
    resource: 'webhooks',
    status: 200,
    refs: ref,
    idOnly: true,
    response: { name: 'ApiWebhookSecretResponse' },
    document: `mutation rotateWebhookSecret($ref: WebhookEndpointRef!) { result: rotateWebhookSecret(ref: $ref) { id secret } }`,
  },
  {
    operationId: 'getWebhookDeliveries',
    summary: 'Get deliveries of a webhook endpoint (every event, its attempts and state)',
    method: 'GET',
    path: '/webhook_endpoints/:identifier/deliveries',
    resource: 'webhooks',
    status: 200,
    refs: ref,
    idOnly: true,
    list: true,
    response: { name: 'ApiWebhookDeliveriesResponse', item: 'ApiWebhookDeliveryResponse' },
    document: `query getWebhookDeliveries($ref: WebhookEndpointRef!, $limit: Int, $skip: Int, $sort: [WebhookDeliverySort!]) {
      result: webhookDeliveries(ref: $ref, limit: $limit, skip: $skip, sort: $sort) {
        results { id eventId type status attempts responseStatus lastError nextAttemptAt createdAt } limit skip size hasNextPage
      }
    }`,
  },
];
