import type { GraphQLSchema } from 'graphql';
import { compileRoutes, type CompiledRoute } from '../rest/compile';
import type { RouteSpec } from '../rest/route';
import {
  ERRORS,
  errorResponses,
  headerComponents,
  listLinksSchema,
  parameterComponents,
  problemSchema,
  securitySchemes,
  successHeaders,
} from './components';
import type { JsonSchema, SchemaRegistry } from './json-schema';
import { ref } from './ref';
import { createLinks, type Located } from './links';
import { parameters, requestBody } from './request';
import { resultSchema } from './selection';
import { safetyParameterRefs, safetyStatuses, safetySuccess } from './safety';
import { eventSchema, webhookOperations } from './webhooks';

export type OpenApiDocument = Record<string, any>;

/** The service is not published under an open-source license; its owner grants use of the API. */
const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };

/** Where the document itself is served (before the key gate: clients read it without a key). */
export const DOCUMENT_PATH = '/openapi.json';

const INFO_DESCRIPTION = [
  'REST facade of the community management API. Every call carries the community API key',
  '(`X-API-Key` header or `api_key` query parameter). Each key may make a limited number of',
  'requests per hour; every response to a request with a valid key carries the `X-RateLimit-*`',
  'headers, and a 429 carries `Retry-After`. Errors are RFC 9457 problem details',
  '(`application/problem+json`). Lists take `limit`, `skip` and `sort` and answer',
  '`{ results, _links, limit, skip, size }`. A documented path asked with another method',
  'answers 405 with an `Allow` header and a problem body.',
].join(' ');

/** `/groups/:groupIdentifier/memberships` -> `/groups/{groupIdentifier}/memberships` and its params. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      // Other Express syntax (optional, regex, wildcard) would need its own documentation.
      if (!/^\w+$/.test(name)) throw new Error(`Path ${expressPath}: only plain :params can be documented`);
      params.push(name);
      return `{${name}}`;
    })
    .join('/');
  if (/[*?()]/.test(path)) throw new Error(`Path ${expressPath}: only plain :params can be documented`);
  return { path, params };
}

/** Without descriptions: two routes may share a component when their shapes agree. */
const shape = (schema: unknown): string =>
  JSON.stringify(schema, (key, value) => (key === 'description' ? undefined : value));

/** Puts a response schema under its component name; one name always means one shape. */
function named(registry: SchemaRegistry, name: string | undefined, schema: JsonSchema, route: CompiledRoute): JsonSchema {
  if (!name) return schema;
  const seen = registry[name];
  if (seen && shape(seen) !== shape(schema)) {
    throw new Error(`Route ${route.operationId}: response component ${name} differs from another route's ${name}`);
  }
  registry[name] ??= schema;
  return ref('schemas', name);
}

function successResponse(route: CompiledRoute, schema: GraphQLSchema, registry: SchemaRegistry) {
  const headers: Record<string, unknown> = { ...successHeaders(), ...safetySuccess(route, schema, successHeaders()).extraHeaders };
  if (route.location) headers.Location = ref('headers', 'Location');
  if (route.status === 204) return { description: 'Done; no content.', headers };
  let body = resultSchema(schema, route.parsed);
  const names = route.response;
  if (route.cursor || route.list) {
    // A list response; offset lists echo `skip`, the cursor feed has none (its next page is in `_links.next`).
    const page = body as { properties: Record<string, JsonSchema> };
    const results = page.properties.results as { items: JsonSchema };
    body = named(registry, names?.name, {
      type: 'object',
      additionalProperties: false,
      required: ['results', '_links', 'limit', 'size'],
      properties: {
        results: { ...results, items: named(registry, names?.item, results.items, route) },
        _links: ref('schemas', 'ListLinks'),
        limit: page.properties.limit,
        ...(route.cursor ? {} : { skip: { ...page.properties.skip, description: 'Echo of the offset.' } }),
        size: { ...page.properties.size, description: 'Number of records in this page.' },
      },
    }, route);
  } else if (body.type === 'array') {
    body = { ...body, items: named(registry, names?.name, body.items as JsonSchema, route) };
  } else {
    body = named(registry, names?.name, body, route);
  }
  const description = { 200: 'OK', 201: 'Created', 202: 'Accepted; the work runs in the background.' }[route.status];
  return { description, headers, content: { 'application/json': { schema: body } } };
}

/**
 * Statuses any route of this shape can answer, decided from the route's shape only. 400 and
 * 404 are on every route: any identifier may be malformed or unknown, and a client or proxy
 * that normalises a path (`/members/%2E` is `/members/` to a WHATWG URL) may reach a list
 * route with what the service answered for a record route. 431 too: any request may carry
 * headers over Node's limit, answered before any route is known.
 */
export function errorStatuses(route: RouteSpec): number[] {
  const statuses = [400, 401, 403, 404, 429, 431, 500, 503];
  if (route.method === 'POST' || route.method === 'PATCH') statuses.push(409);
  // Only body routes read a body (the facade mounts its parsers per route).
  if (route.body) statuses.push(413, 415);
  if (route.cursor) statuses.push(410); // a cursor older than the retention period
  return statuses.sort((a, b) => a - b);
}

function operation(route: CompiledRoute, schema: GraphQLSchema, registry: SchemaRegistry) {
  const { params: pathParams } = openApiPath(route.path);
  const access = route.method === 'GET' ? 'read' : 'write';
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    summary: route.summary,
    description: `Requires scope \`${route.resource}:${access}\` (or \`${route.resource}\`).`,
    tags: [route.resource],
  };
  const params = [...parameters(route, pathParams), ...safetyParameterRefs(route, schema)];
  if (params.length) op.parameters = params;
  if (route.body) op.requestBody = requestBody(route, registry);
  const statuses = [...new Set([...errorStatuses(route), ...safetyStatuses(route)])].sort((a, b) => a - b);
  op.responses = {
    [route.status]: successResponse(route, schema, registry),
    ...safetySuccess(route, schema, successHeaders()).responses,
    ...Object.fromEntries(statuses.map((s) => [s, ref('responses', ERRORS[s].name)])),
  };
  return op;
}

const documentOperation = {
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI document',
  description: 'Readable without an API key.',
  tags: ['documentation'],
  security: [],
  responses: {
    200: {
      description: 'The OpenAPI 3.1 document.',
      headers: { 'X-Request-Id': ref('headers', 'X-Request-Id') },
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    406: ref('responses', 'NotAcceptable'),
  },
};

/** Builds the OpenAPI 3.1 document from the route table and the GraphQL schema, nothing else. */
export function buildOpenApi(schema: GraphQLSchema, specs: RouteSpec[], version: string): OpenApiDocument {
  const registry: SchemaRegistry = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const tags: string[] = [];
  const located: Located[] = [];
  for (const route of compileRoutes(schema, specs)) {
    const { path, params } = openApiPath(route.path);
    const method = route.method.toLowerCase();
    if (paths[path]?.[method]) throw new Error(`Route ${route.operationId}: ${route.method} ${path} is defined twice`);
    (paths[path] ??= {})[method] = operation(route, schema, registry);
    if (!tags.includes(route.resource)) tags.push(route.resource);
    const keys = new Map(Object.values(route.refs ?? {}).flatMap((b) => (b.keyParam ? [[b.param, b.keyParam] as [string, string]] : [])));
    located.push({ route, path, params, keys });
  }
  for (const [route, links] of createLinks(located)) {
    const { path } = openApiPath(route.path);
    (paths[path].post as any).responses[route.status].links = links;
  }
  paths[DOCUMENT_PATH] = { get: documentOperation };
  return pruneUnused({
    openapi: '3.1.0',
    info: { title: 'Community management API', version, description: INFO_DESCRIPTION, license: LICENSE },
    servers: [{ url: '/api/v1' }],
    security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
    tags: [
      ...tags.map((name) => ({ name, description: `Scopes \`${name}:read\` (GET) and \`${name}:write\` (POST, PATCH, DELETE).` })),
      { name: 'documentation', description: 'This document.' },
    ],
    paths,
    webhooks: webhookOperations(),
    components: {
      schemas: { Problem: problemSchema, ListLinks: listLinksSchema, Event: eventSchema, ...sortKeys(registry) },
      responses: errorResponses(),
      parameters: { ...parameterComponents }, // a copy: pruneUnused deletes from it
      headers: headerComponents,
      securitySchemes,
    },
  });
}

/** Drops shared parameters and responses no route refers to (a lint warning, and noise in the docs). */
function pruneUnused(doc: OpenApiDocument): OpenApiDocument {
  const used = JSON.stringify(doc.paths);
  for (const kind of ['parameters', 'responses']) {
    for (const name of Object.keys(doc.components[kind])) {
      if (!used.includes(`"#/components/${kind}/${name}"`)) delete doc.components[kind][name];
    }
  }
  return doc;
}

const sortKeys = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
