import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLInputType,
} from 'graphql';

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

function inputObjectRef(type: GraphQLInputObjectType, registry: SchemaRegistry): string {
  const ref = `#/components/schemas/${type.name}`;
  if (registry[type.name]) return ref;
  registry[type.name] = {}; // placeholder first: input types may be recursive
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of Object.values(type.getFields())) {
    let schema = describe(inputSchema(field.type, registry), field.description);
    const fallback = field.defaultValue === undefined ? undefined : defaultOf(field.type, field.defaultValue);
    if (fallback !== undefined) schema = { ...schema, default: fallback };
    properties[field.name] = schema;
    if (field.type instanceof GraphQLNonNull) required.push(field.name);
  }
  registry[type.name] = {
    type: 'object',
    ...(type.description ? { description: type.description } : {}),
    additionalProperties: false,
    ...(required.length ? { required } : {}),
    properties,
  };
  return ref;
}

/** True when an input value must carry at least one field (so an absent body is a 400). */
export function hasRequiredFields(type: GraphQLInputType): boolean {
  const named = type instanceof GraphQLNonNull ? type.ofType : type;
  // The facade reads an absent body as {}, which only an input object without required fields accepts.
  if (!(named instanceof GraphQLInputObjectType)) return true;
  return Object.values(named.getFields()).some((f) => f.type instanceof GraphQLNonNull);
}
