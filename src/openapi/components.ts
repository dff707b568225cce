import { DEFAULT_LIMIT, MAX_LIMIT } from '../common/pagination';
import { MAX_INT } from '../rest/params';
import type { JsonSchema } from './json-schema';
import { ref } from './ref';
import { REPLAYED_HEADER, STORED_ERRORS } from '../http/idempotency';
import { safetyErrors, safetyHeaders, safetyParameters } from './safety';

/** The body sendProblem writes (src/errors/problem.ts): RFC 9457 problem details. */
export const problemSchema: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details. 5xx bodies only say that the error was logged under requestId.',
  additionalProperties: false,
  required: ['type', 'title', 'status', 'detail', 'instance'],
  properties: {
    type: { type: 'string', description: 'A relative URI naming the kind of problem, e.g. /problems/validation-error.' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    instance: { type: 'string', description: 'The request path.' },
    requestId: { type: 'string', description: 'Also in the X-Request-Id header and the service log.' },
    errors: {
      type: 'array',
      description: 'One entry per invalid value.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['pointer', 'detail'],
        properties: {
          pointer: { type: 'string', description: 'JSON Pointer into the body (/name), or #/query/limit, #/path/identifier, #/header/If-Match.' },
          detail: { type: 'string' },
        },
      },
    },
  },
};

export const listLinksSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['base', 'self'],
  properties: {
    base: { type: 'string', format: 'uri', description: 'Base address of the service.' },
    self: { type: 'string', format: 'uri', description: 'Absolute address of this request, without api_key.' },
    next: { type: 'string', format: 'uri-reference', description: 'Relative address of the next page; absent on the last page.' },
    prev: { type: 'string', format: 'uri-reference', description: 'Relative address of the previous page; absent on the first page.' },
  },
};

const RATE_HEADERS: Record<string, string> = {
  'X-RateLimit-Limit': 'Maximum requests per hour for the key.',
  'X-RateLimit-Remaining': 'Requests remaining in the current window.',
  'X-RateLimit-Reset': 'When the current window resets, in UTC epoch seconds.',
};

const header = (description: string, required: boolean, schema: JsonSchema = { type: 'integer', minimum: 0 }) => ({
  description,
  required,
  schema,
});

/** Success responses always passed the limiter, so they always carry its headers. */
export const headerComponents = {
  ...Object.fromEntries(Object.entries(RATE_HEADERS).map(([name, d]) => [name, header(d, true)])),
  'Retry-After': header('Seconds to wait before the key (or this address) may try again.', true),
  'X-Request-Id': header('The request id, also in the log: the X-Request-Id request header when it is 1-128 visible ASCII characters, otherwise a generated UUID.', true, { type: 'string', minLength: 1, maxLength: 128 }),
  ...safetyHeaders,
  Location: header('Where to read the created or accepted record (a path under the service\'s base address).', true, {
    type: 'string',
    format: 'uri-reference',
  }),
};

export const successHeaders = () => ({
  ...Object.fromEntries(Object.keys(RATE_HEADERS).map((n) => [n, ref('headers', n)])),
  'X-Request-Id': ref('headers', 'X-Request-Id'),
});

/**
 * Errors raised before the key is known (401, some 403/429/503) carry no rate-limit
 * headers, so on error responses they are documented but optional.
 */
function errorHeaders(status: number) {
  return {
    ...Object.fromEntries(
      Object.entries(RATE_HEADERS).map(([n, d]) => [n, header(`${d} Present when the request carried a valid key.`, false)]),
    ),
    ...(status === 429 || status === 503 ? { 'Retry-After': ref('headers', 'Retry-After') } : {}),
    'X-Request-Id': ref('headers', 'X-Request-Id'),
    ...(STORED_ERRORS.has(status) ? { [REPLAYED_HEADER]: ref('headers', REPLAYED_HEADER) } : {}),
  };
}

export const ERRORS: Record<number, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'Invalid parameters or body; `errors` points at each invalid value.' },
  401: { name: 'Unauthorized', description: 'The API key is missing or not valid.' },
  403: { name: 'Forbidden', description: 'The key is revoked or lacks the scope for this method and resource.' },
  404: { name: 'NotFound', description: 'No record of the caller\'s community matches the path.' },
  // No operation lists 405 (the info description says every path may answer it): pruned from the document.
  405: { name: 'MethodNotAllowed', description: 'The path exists but does not serve this method; `Allow` lists the ones it does.' },
  406: { name: 'NotAcceptable', description: 'The Accept header rules out JSON, the only representation of this document.' },
  409: { name: 'Conflict', description: 'The write conflicts with existing data (e.g. a duplicate externalId).' },
  410: { name: 'Gone', description: 'The cursor names an event older than the retention period; start again without `after`.' },
  413: { name: 'ContentTooLarge', description: 'The request body exceeds 1 MiB (a body is read on every route).' },
  415: { name: 'UnsupportedMediaType', description: 'The body\'s content encoding or charset is not supported.' },
  431: { name: 'RequestHeaderFieldsTooLarge', description: 'The request line or the headers exceed 16 KiB; nothing was read further.' },
  429: { name: 'TooManyRequests', description: 'The key used up its hourly allowance, or this address failed to authenticate too often.' },
  500: { name: 'InternalServerError', description: 'Unexpected error; logged under the requestId of the body.' },
  503: { name: 'ServiceUnavailable', description: 'The database or rate-limit store is not reachable; retry shortly.' },
  ...safetyErrors,
};

export function errorResponses() {
  return Object.fromEntries(
    Object.entries(ERRORS).map(([status, { name, description }]) => [
      name,
      { description, headers: errorHeaders(Number(status)), content: { 'application/problem+json': { schema: ref('schemas', 'Problem') } } },
    ]),
  );
}

const keySwitch = (param: string, of: string) => ({
  name: param,
  in: 'query',
  description: `How ${of} is read: \`id\` (default) as the service id, \`externalId\` as the client's externalId.`,
  schema: { type: 'string', enum: ['id', 'externalId'], default: 'id' },
  // The examples address records by the externalIds the body examples give them.
  example: 'externalId',
});

export const parameterComponents = {
  key: keySwitch('key', "the record's path identifier"),
  groupsKey: keySwitch('groupsKey', '`groupIdentifier`'),
  limit: {
    name: 'limit',
    in: 'query',
    description: 'Maximum number of records in the page.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    example: DEFAULT_LIMIT,
  },
  skip: {
    name: 'skip',
    in: 'query',
    description: 'Number of records skipped from the start (zero-based offset).',
    schema: { type: 'integer', minimum: 0, maximum: MAX_INT, default: 0 },
    example: 0,
  },
  ...safetyParameters,
};

export const securitySchemes = {
  ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The community API key; wins over api_key.' },
  ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'The community API key as a query parameter.' },
};
