import type { Resource } from '../auth/scopes';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How a path identifier is read: `key`/`groupsKey` may switch it to the externalId (SPEC.md 4.1). */
export interface RefBinding {
  param: string;
  /** Query parameter choosing id or externalId; null: id only (additional fields). */
  keyParam: 'key' | 'groupsKey' | null;
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
   * A cursor list (the event feed): binds `limit` and these query parameters (name: description)
   * to same-named variables, a list variable taking comma-separated values; answers a list
   * response whose `_links.next` carries `after=` the operation's `next`.
   */
  cursor?: Record<string, string>;
}
