import { GraphQLInputObjectType, GraphQLList, GraphQLNonNull, getNamedType, getNullableType } from 'graphql';
import { ruleOf, type FieldRule } from '../common/rules';
import { FIELD_PARAM_PREFIX } from '../rest/filter';
import type { CompiledRoute } from '../rest/compile';
import { CSV_TYPES, csvRowType } from '../rest/csv';
import { ref } from './ref';
import { hasRequiredFields, inputSchema, ruleKeywords, type JsonSchema, type SchemaRegistry } from './json-schema';

/** Path parameters, key switches and list parameters of one route, read from its RouteSpec. */
export function parameters(route: CompiledRoute, pathParams: string[]) {
  const bindings = Object.values(route.refs ?? {});
  const out: object[] = pathParams.map((name) => {
    const binding = bindings.find((b) => b.param === name);
    const description = !binding
      ? undefined
      : binding.keyParam
        ? `The record's service id, or its externalId with \`${binding.keyParam}=externalId\`.`
        : 'The record\'s service id (externalId addressing is not offered here).';
    const example = binding ? { example: binding.example } : {};
    return { name, in: 'path', required: true, ...(description ? { description } : {}), schema: { type: 'string' }, ...example };
  });
  for (const keyParam of new Set(bindings.map((b) => b.keyParam))) {
    if (keyParam) out.push(ref('parameters', keyParam));
  }
  if (route.list) {
    // What sortParam (src/rest/params.ts) accepts: entries trimmed, directions in any case.
    const dir = (word: string) => [...word].map((c) => `[${c.toUpperCase()}${c}]`).join('');
    const field = `(${route.sortFields.join('|')})(:(${dir('asc')}|${dir('desc')}))?`;
    out.push(ref('parameters', 'limit'), ref('parameters', 'skip'), {
      name: 'sort',
      in: 'query',
      description:
        `Sortable fields: ${route.sortFields.map((f) => `\`${f}\``).join(', ')}. Each entry is \`field\` or ` +
        '`field:asc|desc` (direction in any case); entries are comma-separated (spaces around them are ignored) and later ones break ties of earlier ones. ' +
        'Text fields (name, firstName, lastName) sort case-insensitively. ' +
        'Default: createdAt ascending; ties always end with createdAt, then id, ascending.',
      schema: { type: 'string', pattern: `^\\s*${field}\\s*(,\\s*${field}\\s*)*$`, examples: [`${route.sortFields[0]}:desc`] },
    });
  }
  if (route.filter) out.push(...filterParameters(route));
  if (route.cursor) {
    out.push(ref('parameters', 'limit'));
    for (const [name, description] of Object.entries(route.cursor)) out.push({ name, in: 'query', description, schema: { type: 'string' } });
  }
  return out;
}

/** The JSON body from the GraphQL input type of the body variable; CSV too where the route binds it. */
export function requestBody(route: CompiledRoute, registry: SchemaRegistry) {
  const type = route.variableTypes.get(route.body!)!;
  const schema = inputSchema(type, registry);
  // The component's example as the body's example: what Swagger UI's "Try it out" sends.
  const example = (registry[String(schema.$ref ?? '').split('/').pop()!]?.examples as unknown[] | undefined)?.[0];
  const content: Record<string, { schema: JsonSchema; example?: unknown }> = {
    'application/json': { schema, ...(example !== undefined ? { example } : {}) },
  };
  if (route.csv) {
    // The columns are the fields of the row input type the facade converts each line into (src/rest/csv.ts).
    const row = csvRowType(type, route.csv);
    const fields = Object.values(row.getFields());
    const columns = fields.map((f) => `\`${f.name}\`${f.type instanceof GraphQLNonNull ? ' (required)' : ''}`);
    const lists = fields.some((f) => getNullableType(f.type) instanceof GraphQLList);
    const csvSchema = {
      type: 'string',
      description:
        `CSV instead of JSON: a header row, then one ${row.name} per line (the \`${route.csv.rows}\` of the JSON body). ` +
        `Columns: ${columns.join(', ')}.` +
        (lists ? ` Cells of list fields are separated by \`${route.csv.listSeparator ?? ';'}\`.` : ''),
    };
    for (const mediaType of CSV_TYPES) content[mediaType] = { schema: csvSchema };
  }
  return { required: hasRequiredFields(type), content };
}

/**
 * The query parameters of a list's `filter` (src/rest/filter.ts), with the rules the core
 * checks (src/common/rules.ts): one per scalar filter field, and the `field.<id>` family as one
 * exploded form object (each of its properties is a query parameter of its own).
 */
function filterParameters(route: CompiledRoute): object[] {
  const input = getNullableType(route.variableTypes.get('filter')!) as GraphQLInputObjectType;
  const fields = input.getFields();
  const out: object[] = route.filter!.scalars.map((name) => {
    const rule = ruleOf(fields[name].extensions) as FieldRule | undefined;
    return {
      name,
      in: 'query',
      required: false,
      description: `${fields[name].description ?? ''} Combines with the other filters, sort, limit, skip and modifiedSince (all must match).`.trim(),
      schema: { type: 'string', ...ruleKeywords(rule) },
      ...(rule?.example !== undefined ? { example: rule.example } : {}),
    };
  });
  if (route.filter!.pairs) {
    const item = getNamedType(fields[route.filter!.pairs].type) as GraphQLInputObjectType;
    const valueRule = ruleOf(item.getFields().value.extensions) as FieldRule | undefined;
    const idExample = (ruleOf(item.getFields().id.extensions) as FieldRule | undefined)?.example;
    out.push({
      name: 'additionalFieldFilters',
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description:
        `\`${FIELD_PARAM_PREFIX}<additional field id>=<value>\`: members whose value of that additional field equals the value exactly ` +
        '(repeatable with other field ids, each must match). An id that is not one of the community\'s additional fields is a 400 ' +
        `naming \`#/query/${FIELD_PARAM_PREFIX}<id>\`.`,
      schema: {
        type: 'object',
        propertyNames: { pattern: `^${FIELD_PARAM_PREFIX.replace('.', '\\.')}` },
        additionalProperties: { type: 'string', ...ruleKeywords(valueRule) },
      },
      ...(idExample !== undefined && valueRule?.example !== undefined ? { example: { [`${FIELD_PARAM_PREFIX}${idExample}`]: valueRule.example } } : {}),
    });
  }
  return out;
}
