import { EVENT_TYPES } from '../modules/events/event-types';
import type { JsonSchema } from './json-schema';

/** The event every webhook delivery POSTs (and the feed and subscriptions carry). */
export const eventSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'createdAt', 'data', 'changes'],
  properties: {
    id: { type: 'string', description: 'The event id; also the `webhook-id` header.' },
    type: { type: 'string', enum: EVENT_TYPES, description: '`<resource>.<action>`.' },
    createdAt: { type: 'string', format: 'date-time' },
    data: {
      type: 'object',
      description: 'The record as its REST GET returns it (memberships also carry groupId); for `deleted`: `id`, `externalId` (and `groupId` for memberships); for `group_membership.reordered`: `groupId`; for `api_key.*`: the key\'s `id`, `scopes`, `rateLimitPerHour`, `createdAt`, `expiresAt`, `revokedAt`, `lastUsedAt`, `replacedBy` (never the key).',
    },
    changes: { type: ['array', 'null'], items: { type: 'string' }, description: 'The changed fields on `updated`; null otherwise.' },
  },
};

const header = (description: string) => ({ required: true, schema: { type: 'string' }, description });

/** OpenAPI 3.1 `webhooks`: one named entry per event type, each a POST of the Event to the endpoint's url. */
export function webhookOperations(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary: `${type} delivered to a webhook endpoint`,
          description: 'Signed per Standard Webhooks. A 2xx answer within 10 s is success; otherwise retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.',
          tags: ['webhooks'],
          security: [],
          parameters: [
            { name: 'webhook-id', in: 'header', ...header('The event id: the same on every retry.') },
            { name: 'webhook-timestamp', in: 'header', ...header('Epoch seconds of this attempt.') },
            { name: 'webhook-signature', in: 'header', ...header('`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64-decoded secret after `whsec_`.') },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { allOf: [{ $ref: '#/components/schemas/Event' }, { type: 'object', properties: { type: { const: type } } }] },
              },
            },
          },
          responses: { 200: { description: 'Any 2xx acknowledges the delivery.' } },
        },
      },
    ]),
  );
}
