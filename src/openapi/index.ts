import type { GraphQLSchema } from 'graphql';
import { buildSchema } from '../graphql/schema';
import { routes } from '../rest/routes';
import { buildOpenApi, type OpenApiDocument } from './document';
import pkg from '../../package.json';

export { DOCUMENT_PATH, type OpenApiDocument } from './document';

// The API version of the document follows the package: a release that changes the contract bumps it.
const VERSION = pkg.version;

const cache = new WeakMap<GraphQLSchema, OpenApiDocument>();

/** The document for the service's schema and route table, built once per schema (at boot), never per request. */
export function openApiDocument(schema: GraphQLSchema = buildSchema()): OpenApiDocument {
  let doc = cache.get(schema);
  if (!doc) {
    doc = buildOpenApi(schema, routes, VERSION);
    cache.set(schema, doc);
  }
  return doc;
}

/** The exact text of schema/openapi.json. */
export function printedOpenApi(): string {
  return JSON.stringify(openApiDocument(), null, 2) + '\n';
}
