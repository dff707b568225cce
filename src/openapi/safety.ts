import type { GraphQLSchema } from 'graphql';
import type { CompiledRoute } from '../rest/compile';
import { ENTITY_TAG, hasEtag, takesIfMatch, takesModifiedSince } from '../rest/conditional';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_TTL_HOURS, REPLAYED_HEADER } from '../http/idempotency';
import { ref } from './ref';

/**
 * What the document says about safe retries and conditional requests (src/http/idempotency.ts,
 * src/rest/conditional.ts): the request headers and `modifiedSince`, the ETag and
 * Idempotent-Replayed answers, the Consistency-Token of reads on replicas (src/db/replicas.ts), and
 * the 304, 409, 412 and 422 statuses.
 */
export const safetyParameters = {
  [IDEMPOTENCY_HEADER]: {
    name: IDEMPOTENCY_HEADER,
    in: 'header',
    required: false,
    description:
      `1-255 printable characters chosen by the client (e.g. a UUID). The first answer (2xx, or 400/404/409/422) is stored ` +
      `for ${IDEMPOTENCY_TTL_HOURS} hours per API key; a repeat with the same method, path and body gets it again with ` +
      `\`${REPLAYED_HEADER}: true\` and changes nothing; with another body it is a 422; while the first is still running, a 409. ` +
      `Spaces before and after it are not part of it (HTTP drops them before the service sees the key).`,
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[ -~]+$' },
    // A fixed example: without one, generators (Portman, openapi-to-postman) make a random string
    // from the pattern, and one that starts with a space pads to a value HTTP trims.
    example: '0b6f7a52-3c1e-4f6d-9a8b-2d4e6f8a1c3b',
  },
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETag(s) of a copy the client holds (or *): a 304 without a body when the record still has one of them.',
    schema: { type: 'string' },
  },
  'If-Match': {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The ETag the change is based on (or *): the write happens only if the record still has it, else 412. ' +
      'Checked and written in one transaction. Anything but one entity tag or * is a 400.',
    // What ifMatchVersion takes: `*`, or one entity tag (a weak one is taken and never matches: 412).
    schema: { type: 'string', pattern: `^(\\*|${ENTITY_TAG.source.slice(1, -1)})$` },
  },
  'Consistency-Token': {
    name: 'Consistency-Token',
    in: 'header',
    required: false,
    description:
      'The Consistency-Token of an earlier write (by any key): the answer includes that write or anything newer. ' +
      'Without it a key still reads its own writes; the token carries a write to another client. Anything else is a 400.',
    schema: { type: 'string', pattern: '^[0-9A-Fa-f]{16}$' },
  },
  modifiedSince: {
    name: 'modifiedSince',
    in: 'query',
    required: false,
    description: 'Only records whose modifiedAt is at or after this instant (RFC 3339); combines with sort, limit and skip.',
    schema: { type: 'string', format: 'date-time' },
  },
};

export const safetyHeaders = {
  'Consistency-Token': {
    description:
      'With read replicas configured: an opaque token for this write. A read that sends it back as the Consistency-Token ' +
      'request header sees this write or anything newer.',
    required: false,
    schema: { type: 'string' },
  },
  ETag: { description: 'The record\'s version as a strong entity tag; send it in If-None-Match or If-Match.', required: true, schema: { type: 'string' } },
  [REPLAYED_HEADER]: {
    description: 'true on an answer replayed for a repeated Idempotency-Key.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};

export const safetyErrors: Record<number, { name: string; description: string }> = {
  412: { name: 'PreconditionFailed', description: 'If-Match names a version the record no longer has: read it again, then retry.' },
  422: { name: 'UnprocessableContent', description: 'The Idempotency-Key was already used with another method, path or body.' },
};

export function safetyParameterRefs(route: CompiledRoute, schema: GraphQLSchema): object[] {
  const out: object[] = [];
  if (route.method === 'POST') out.push(ref('parameters', IDEMPOTENCY_HEADER));
  if (hasEtag(schema, route)) out.push(ref('parameters', 'If-None-Match'));
  if (takesIfMatch(route)) out.push(ref('parameters', 'If-Match'));
  if (takesModifiedSince(route)) out.push(ref('parameters', 'modifiedSince'));
  if (route.method === 'GET') out.push(ref('parameters', 'Consistency-Token'));
  return out;
}

/** Extra error statuses: 409 (key in use) and 422 (key reused) on POST, 412 with If-Match. */
export function safetyStatuses(route: CompiledRoute): number[] {
  const out: number[] = [];
  if (route.method === 'POST') out.push(409, 422);
  if (takesIfMatch(route)) out.push(412);
  return out;
}

/** Success-response headers and extra responses (304) of the route. */
export function safetySuccess(route: CompiledRoute, schema: GraphQLSchema, headers: Record<string, unknown>) {
  const extraHeaders: Record<string, unknown> = {};
  const responses: Record<string, unknown> = {};
  if (route.method === 'POST') extraHeaders[REPLAYED_HEADER] = ref('headers', REPLAYED_HEADER);
  if (route.method !== 'GET') extraHeaders['Consistency-Token'] = ref('headers', 'Consistency-Token');
  if (hasEtag(schema, route)) {
    extraHeaders.ETag = ref('headers', 'ETag');
    responses[304] = { description: 'Not modified: If-None-Match names the current version; no body.', headers: { ...headers, ETag: ref('headers', 'ETag') } };
  }
  return { extraHeaders, responses };
}
