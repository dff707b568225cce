import type { Resource } from '../auth/scopes';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How a path identifier is read: `key`/`groupsKey` may switch it to the externalId (docs/api.md, Addressing). */
export interface RefBinding {
  param: string;
  /** Query parameter choosing id or externalId; null: id only (additional fields). */
  keyParam: 'key' | 'groupsKey' | null;
  /** The variable is the id itself (an `ID!`), not a RecordRef object (import jobs). */
  scalar?: boolean;
  /** The path value of the document's examples: an externalId the examples create (with key=externalId), or an id. */
  example?: string;
}

/**
 * Lets a route also take a `text/csv` body (header row): its records become the list field
 * `rows` of the body variable, each cell typed like the row input's field (csv.ts).
 */
export interface CsvBinding {
  rows: string;
  /** Splits a cell of a list field (default `;`). */
  listSeparator?: string;
}

/**
 * One REST route = one static GraphQL operation. Its selection aliased `result`
 * is the answer; variables come from path refs, the body and list parameters.
 */
export interface RouteSpec {
  operationId: string;
  summary: string;
  method: Method;
  /** Express path under /api/v1. */
  path: string;
  resource: Resource;
  status: 200 | 201 | 202 | 204;
  document: string;
  refs?: Record<string, RefBinding>;
  /** Variable receiving the JSON body. */
  body?: string;
  /** The body may also be CSV (needs `body`). */
  csv?: CsvBinding;
  /** Records addressed by id only (additional fields): `key=externalId` is a 400 on every route. */
  idOnly?: boolean;
  /** Binds `limit`, `skip` and `sort` and answers a list response with `_links`. */
  list?: boolean;
  /**
   * Component names of the success body in the OpenAPI document: `name` for the body (the
   * items of an array result), `item` for the records of a list route. Routes that answer
   * the same shape share the name.
   */
  response?: { name: string; item?: string };
  /** A 201/202 answer also carries `Location`: this path with `{id}` replaced by the result's id. */
  location?: string;
  /**
   * A cursor list (the event feed): binds `limit` and these query parameters (name: description)
   * to same-named variables, a list variable taking comma-separated values; answers a list
   * response whose `_links.next` carries `after=` the operation's `next`.
   */
  cursor?: Record<string, string>;
}
