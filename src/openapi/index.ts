import type { GraphQLSchema } from 'graphql';
import { buildSchema } from '../graphql/schema';
import { routes } from '../rest/routes';
import { buildOpenApi, type OpenApiDocument } from './document';
import pkg from '../../package.json';

export { DOCUMENT_PATH, type OpenApiDocument } from './document';

// The API version of the document follows the package: a release that changes the contract bumps it.
const VERSION = pkg.version;

const cache = new WeakMap<GraphQLSchema, OpenApiDocument>();

/** The document for the service's schema and route table, built once per schema, never per request. */
export function openApiDocument(schema: GraphQLSchema = buildSchema()): OpenApiDocument {
  let doc = cache.get(schema);
  if (!doc) {
    doc = buildOpenApi(schema, routes, VERSION);
    cache.set(schema, doc);
  }
  return doc;
}

/**
 * The document as compact JSON, for `GET /api/v1/openapi.json`: the server keeps this text
 * only, built on the first request, and not the document's object tree (docs/performance.md).
 */
export function openApiJson(schema: GraphQLSchema): string {
  return JSON.stringify(cache.get(schema) ?? buildOpenApi(schema, routes, VERSION));
}

/** The exact text of schema/openapi.json. */
export function printedOpenApi(): string {
  return JSON.stringify(openApiDocument(), null, 2) + '\n';
}
