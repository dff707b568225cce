import type { Request } from 'express';
import { GraphQLInputObjectType, GraphQLList, GraphQLScalarType, getNamedType, getNullableType, type GraphQLInputType } from 'graphql';
import { bodyPointer, single, type QueryIssue } from './params';

/** Query parameters `field.<additional field id>=<value>` fill the filter's list of `{ id, value }`. */
export const FIELD_PARAM_PREFIX = 'field.';

/**
 * How a list route binds its operation's `filter` argument (docs/api.md, "Finding members and
 * groups"): each scalar field of the filter input type is the query parameter of the same
 * name (`q`, `emailAddress`); a list field of `{ id, value }` objects (`fields`) is filled from
 * the `field.<id>=<value>` parameters. Read from the schema at boot, like the sort fields.
 */
export interface FilterBinding {
  scalars: string[];
  pairs?: string;
}

export function filterBinding(type: GraphQLInputType | undefined): FilterBinding | undefined {
  if (!type) return undefined;
  const input = getNullableType(type);
  if (!(input instanceof GraphQLInputObjectType)) throw new Error(`filter must be an input object, not ${String(type)}`);
  const binding: FilterBinding = { scalars: [] };
  for (const field of Object.values(input.getFields())) {
    const t = getNullableType(field.type);
    if (t instanceof GraphQLScalarType) binding.scalars.push(field.name);
    else if (t instanceof GraphQLList && getNamedType(t) instanceof GraphQLInputObjectType) {
      const item = getNamedType(t) as GraphQLInputObjectType;
      if (!['id', 'value'].every((k) => k in item.getFields()) || binding.pairs) throw new Error(`filter.${field.name} cannot be bound to query parameters`);
      binding.pairs = field.name;
    } else throw new Error(`filter.${field.name} cannot be bound to query parameters`);
  }
  return binding;
}

/**
 * The `filter` variable from the query (undefined when no filter parameter is given) and where
 * each of its values came from (`filter.q` -> `#/query/q`, `filter.fields.0` -> `#/query/field.<id>`).
 */
export function filterParam(binding: FilterBinding, req: Request, issues: QueryIssue[], sources: Map<string, string>) {
  const filter: Record<string, unknown> = {};
  for (const name of binding.scalars) {
    const value = single(req, name, issues);
    sources.set(`filter.${name}`, `#/query/${name}`);
    if (value !== undefined) filter[name] = value;
  }
  if (binding.pairs) {
    const pairs: { id: string; value: string }[] = [];
    for (const param of Object.keys(req.query)) {
      if (!param.startsWith(FIELD_PARAM_PREFIX)) continue;
      const value = single(req, param, issues);
      if (value === undefined) continue;
      // JSON Pointer escaping: the id part is the client's text (`field.a/b` is `#/query/field.a~1b`).
      sources.set(`filter.${binding.pairs}.${pairs.length}`, `#/query${bodyPointer([param])}`);
      pairs.push({ id: param.slice(FIELD_PARAM_PREFIX.length), value });
    }
    if (pairs.length) filter[binding.pairs] = pairs;
  }
  return Object.keys(filter).length ? filter : undefined;
}
