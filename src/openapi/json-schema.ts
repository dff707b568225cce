import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLInputType,
} from 'graphql';

import { ruleOf, type FieldRule, type ObjectRule } from '../common/rules';

export type JsonSchema = Record<string, unknown>;

/** Named input objects land in components.schemas; the generator collects them here. */
export type SchemaRegistry = Record<string, JsonSchema>;

/** How scalars travel in JSON: the same rules as src/rest/input-check.ts and graphql's serializers. */
export function scalarSchema(type: GraphQLScalarType): JsonSchema {
  switch (type.name) {
    case 'ID':
    case 'String':
      return { type: 'string' };
    case 'Int':
      return { type: 'integer', format: 'int32' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'DateTimeISO':
      return { type: 'string', format: 'date-time' };
    default:
      // An unknown custom scalar accepts any JSON value rather than inventing a type.
      return type.description ? { description: type.description } : {};
  }
}

export function enumSchema(type: GraphQLEnumType): JsonSchema {
  return { type: 'string', enum: type.getValues().map((v) => v.name) };
}

/** Adds JSON null to a schema: GraphQL nullable means the key may carry null. */
export function orNull(schema: JsonSchema): JsonSchema {
  if (schema.$ref || schema.anyOf) return { anyOf: [...((schema.anyOf as JsonSchema[]) ?? [schema]), { type: 'null' }] };
  if (schema.type === undefined) return schema; // already any JSON value
  const out: JsonSchema = { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

function describe(schema: JsonSchema, description: string | null | undefined): JsonSchema {
  if (!description) return schema;
  // Siblings of $ref are allowed in 3.1, but keeping the description outside anyOf reads better.
  return { ...schema, description };
}

/** A GraphQL default value as JSON; enums default to their internal value, which is serialized. */
function defaultOf(type: GraphQLInputType, value: unknown): unknown {
  const named = type instanceof GraphQLNonNull ? type.ofType : type;
  if (named instanceof GraphQLEnumType) return named.serialize(value);
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? value : undefined;
}

/**
 * JSON Schema of a GraphQL input type, mirroring checkInputValue: NonNull fields are
 * required and not null, other fields may be absent or null, unknown fields are refused.
 */
export function inputSchema(type: GraphQLInputType, registry: SchemaRegistry): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullInput(type.ofType, registry);
  return orNull(nonNullInput(type, registry));
}

function nonNullInput(type: GraphQLInputType, registry: SchemaRegistry): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullInput(type.ofType, registry);
  if (type instanceof GraphQLList) return { type: 'array', items: inputSchema(type.ofType, registry) };
  if (type instanceof GraphQLEnumType) return enumSchema(type);
  if (type instanceof GraphQLScalarType) return scalarSchema(type);
  return { $ref: inputObjectRef(type, registry) };
}

/** The component name of an input object: its ObjectRule's `name`, else the GraphQL name. */
export function inputName(type: GraphQLInputObjectType): string {
  return (ruleOf(type.extensions) as ObjectRule | undefined)?.name ?? type.name;
}

/** The JSON Schema keywords of a field rule (src/common/rules.ts): the same limits the service checks. */
export function ruleKeywords(rule: FieldRule | undefined): JsonSchema {
  if (!rule) return {};
  switch (rule.kind) {
    case 'text':
      return {
        ...(rule.min ? { minLength: rule.min } : {}),
        maxLength: rule.max,
        ...(rule.pattern ? { pattern: rule.pattern.source } : {}),
        ...(rule.format ? { format: rule.format } : {}),
      };
    case 'int':
      return { minimum: rule.min, maximum: rule.max };
    case 'list':
      return {
        ...(rule.minItems !== undefined ? { minItems: rule.minItems } : {}),
        ...(rule.maxItems !== undefined ? { maxItems: rule.maxItems } : {}),
      };
    default:
      return {};
  }
}

/** An example value for a field without a declared one: enums take their first value, objects their own example. */
function exampleOf(type: GraphQLInputType, registry: SchemaRegistry): unknown {
  const named = type instanceof GraphQLNonNull ? type.ofType : type;
  if (named instanceof GraphQLList) {
    const item = exampleOf(named.ofType, registry);
    return item === undefined ? undefined : [item];
  }
  if (named instanceof GraphQLEnumType) return named.getValues()[0]?.value;
  if (named instanceof GraphQLInputObjectType) return (registry[inputName(named)]?.examples as unknown[] | undefined)?.[0];
  return undefined;
}

function inputObjectRef(type: GraphQLInputObjectType, registry: SchemaRegistry): string {
  const name = inputName(type);
  const ref = `#/components/schemas/${name}`;
  if (registry[name]) return ref;
  registry[name] = {}; // placeholder first: input types may be recursive
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const example: Record<string, unknown> = {};
  const presentTypes: Record<string, JsonSchema> = {};
  for (const field of Object.values(type.getFields())) {
    const rule = ruleOf(field.extensions) as FieldRule | undefined;
    const nonNull = field.type instanceof GraphQLNonNull;
    // nullable exactly where the service accepts null: GraphQL nullability, narrowed by the rule.
    const nullable = !nonNull && (rule?.nullable ?? true);
    const base = { ...nonNullInput(field.type, registry), ...ruleKeywords(rule) };
    presentTypes[field.name] = typeof base.type === 'string' ? { type: base.type } : { not: { type: 'null' } };
    let schema = describe(nullable ? orNull(base) : base, field.description);
    const graphqlDefault = field.defaultValue === undefined ? undefined : defaultOf(field.type, field.defaultValue);
    const fallback = rule?.kind === 'value' && rule.default !== undefined ? rule.default : graphqlDefault;
    if (fallback !== undefined) schema = { ...schema, default: fallback };
    const sample = rule?.example !== undefined ? rule.example : nonNull ? exampleOf(field.type, registry) : undefined;
    if (sample !== undefined) {
      schema = { ...schema, examples: [sample] };
      example[field.name] = sample;
    }
    properties[field.name] = schema;
    if (nonNull) required.push(field.name);
  }
  const objectRule = ruleOf(type.extensions) as ObjectRule | undefined;
  // "At least one of": each alternative names fields that must be present and not null.
  // Wrapped in allOf so generated clients intersect it with the properties (openapi-typescript
  // turns a sibling anyOf into a union, which would let `{}` type-check).
  const anyOf = objectRule?.anyOf?.map((fields) => ({
    required: fields,
    properties: Object.fromEntries(fields.map((f) => [f, presentTypes[f]])),
  }));
  registry[name] = {
    type: 'object',
    ...(type.description ? { description: type.description } : {}),
    additionalProperties: false,
    ...(required.length ? { required } : {}),
    properties,
    ...(anyOf ? { allOf: [{ anyOf }] } : {}),
    examples: [objectRule?.example ?? example],
  };
  return ref;
}

/** True when an input value must carry at least one field (so an absent body is a 400). */
export function hasRequiredFields(type: GraphQLInputType): boolean {
  const named = type instanceof GraphQLNonNull ? type.ofType : type;
  // The facade reads an absent body as {}, which only an input object without required fields accepts.
  if (!(named instanceof GraphQLInputObjectType)) return true;
  if ((ruleOf(named.extensions) as ObjectRule | undefined)?.anyOf?.length) return true; // {} lacks every alternative
  return Object.values(named.getFields()).some((f) => f.type instanceof GraphQLNonNull);
}
