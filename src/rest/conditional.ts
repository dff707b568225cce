import type { Request, Response } from 'express';
import { GraphQLObjectType, Kind, getNamedType, parse, print, type DocumentNode, type FieldNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { DateTimeISO } from '../graphql/date-scalar';
import type { CompiledRoute } from './compile';
import { single, type QueryIssue } from './params';
import { untraced } from '../observability/spans';

/**
 * Conditional requests of the facade (docs/api.md, "Safe retries and conditional requests"):
 * single-record GETs answer an `ETag` (the record's `version`, see src/db/version.ts) and
 * 304 to a matching `If-None-Match`; PATCH and DELETE pass `If-Match` to the operation's
 * `expectedVersion`, so the core checks it and writes in one transaction (412 otherwise);
 * lists bind `modifiedSince`.
 */

/** Alias of the version the facade adds to a GET's selection; taken out of the body again. */
const ETAG_ALIAS = '_etag';

const rootField = (doc: DocumentNode): FieldNode => {
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  return op.selectionSet.selections.find((s): s is FieldNode => s.kind === Kind.FIELD && s.alias?.value === 'result')!;
};

/** A GET of one record whose type has a `version`: it answers an ETag and honours If-None-Match. */
export function hasEtag(schema: GraphQLSchema, route: CompiledRoute): boolean {
  if (route.method !== 'GET' || route.list) return false;
  const field = schema.getQueryType()?.getFields()[rootField(route.parsed).name.value];
  const type = field && getNamedType(field.type);
  return type instanceof GraphQLObjectType && 'version' in type.getFields();
}

/** PATCH/DELETE routes whose operation takes `$expectedVersion`: they honour If-Match. */
export const takesIfMatch = (route: CompiledRoute): boolean => route.variableTypes.has('expectedVersion');

/** Lists whose operation takes `$modifiedSince`. */
export const takesModifiedSince = (route: CompiledRoute): boolean => Boolean(route.list) && route.variableTypes.has('modifiedSince');

/** A fresh copy of a route's document, made at boot: outside any trace (src/observability/spans.ts, untraced). */
const copyOf = (doc: DocumentNode): DocumentNode => untraced(() => parse(print(doc), { noLocation: true }));

/** The route's document with `_etag: version` added to the `result` selection. */
export function withEtagSelection(doc: DocumentNode): DocumentNode {
  const copy = copyOf(doc);
  const field = rootField(copy) as unknown as { selectionSet: { selections: unknown[] } };
  field.selectionSet.selections.push({
    kind: Kind.FIELD,
    alias: { kind: Kind.NAME, value: ETAG_ALIAS },
    name: { kind: Kind.NAME, value: 'version' },
  });
  return copy;
}

/**
 * The route's document reduced to `result { _etag: version }`: what a GET with If-None-Match
 * runs first. Unchanged record: 304 without resolving (or loading) any other field;
 * changed: the full document runs after it.
 */
export function versionOnly(doc: DocumentNode): DocumentNode {
  const copy = copyOf(doc);
  const field = rootField(copy) as unknown as { selectionSet: { selections: unknown[] } };
  field.selectionSet.selections = [{ kind: Kind.FIELD, alias: { kind: Kind.NAME, value: ETAG_ALIAS }, name: { kind: Kind.NAME, value: 'version' } }];
  return { ...copy, definitions: copy.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION) };
}

/** Takes the version out of a GET's data and returns its ETag (a strong entity tag). */
export function takeEtag(data: Record<string, unknown>): string | undefined {
  const version = data[ETAG_ALIAS];
  delete data[ETAG_ALIAS];
  return typeof version === 'string' && version ? `"${version}"` : undefined;
}

/** If-None-Match (weak comparison, `*` matches any current record): true means 304. */
export function noneMatchHit(req: Request, etag: string): boolean {
  const header = req.get('if-none-match');
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** One entity tag (RFC 9110, 8.8.3); also the OpenAPI document's If-Match pattern (src/openapi/safety.ts). */
export const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7E]*)"$/;

/**
 * The `expectedVersion` an If-Match asks for: undefined without the header or with `*`
 * (any current record). A weak tag never matches (strong comparison), so it is passed on
 * as is and fails as 412, like a tag of an older version.
 */
export function ifMatchVersion(req: Request, issues: QueryIssue[]): string | undefined {
  const header = req.get('if-match')?.trim();
  if (!header || header === '*') return undefined;
  const match = ENTITY_TAG.exec(header);
  if (!match) {
    issues.push({ pointer: '#/header/If-Match', detail: 'If-Match must be one entity tag as sent in ETag (in double quotes), or *' });
    return undefined;
  }
  return match[1] ? header : match[2];
}

/** `modifiedSince=<RFC 3339 timestamp>`, passed on as text after the same check GraphQL applies. */
export function modifiedSinceParam(req: Request, issues: QueryIssue[]): string | undefined {
  const raw = single(req, 'modifiedSince', issues);
  if (raw === undefined) return undefined;
  try {
    DateTimeISO.parseValue(raw);
    return raw;
  } catch {
    issues.push({ pointer: '#/query/modifiedSince', detail: 'modifiedSince must be an RFC 3339 date-time, e.g. 2026-11-22T13:00:00.000Z' });
    return undefined;
  }
}

/** Sets the ETag header; answers 304 without a body when If-None-Match already has it. */
export function answerNotModified(req: Request, res: Response, etag: string): boolean {
  res.setHeader('ETag', etag);
  return noneMatchHit(req, etag);
}
