import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  type GraphQLInputType,
} from 'graphql';
import type { FieldIssue } from '../errors/app-error';

const INT_MAX = 2 ** 31 - 1;

function label(path: (string | number)[]): string {
  return path.length ? path.join('.') : 'The body';
}

/**
 * Checks a JSON value against a GraphQL input type before execution, so REST clients
 * get one problem per field with a pointer instead of a GraphQL coercion message.
 * The types come from the core schema: the REST facade has no field list of its own.
 */
export function checkInputValue(type: GraphQLInputType, value: unknown, path: (string | number)[] = []): FieldIssue[] {
  if (type instanceof GraphQLNonNull) {
    if (value === undefined) return [{ path, detail: `${label(path)} is required` }];
    if (value === null) return [{ path, detail: `${label(path)} must not be null` }];
    return checkInputValue(type.ofType, value, path);
  }
  if (value === null || value === undefined) return [];
  if (type instanceof GraphQLList) {
    if (!Array.isArray(value)) return [{ path, detail: `${label(path)} must be an array` }];
    return value.flatMap((item, i) => checkInputValue(type.ofType, item, [...path, i]));
  }
  if (type instanceof GraphQLInputObjectType) {
    if (typeof value !== 'object' || Array.isArray(value)) {
      return [{ path, detail: `${label(path)} must be a JSON object` }];
    }
    const fields = type.getFields();
    const issues: FieldIssue[] = [];
    for (const name of Object.keys(value)) {
      if (!Object.prototype.hasOwnProperty.call(fields, name)) {
        issues.push({ path: [...path, name], detail: `${name} is unknown or read-only and cannot be written` });
      }
    }
    for (const [name, field] of Object.entries(fields)) {
      issues.push(...checkInputValue(field.type, (value as Record<string, unknown>)[name], [...path, name]));
    }
    return issues;
  }
  if (type instanceof GraphQLEnumType) {
    const allowed = type.getValues().map((v) => v.name);
    if (typeof value === 'string' && allowed.includes(value)) return [];
    return [{ path, detail: `${label(path)} must be one of ${allowed.join(', ')}` }];
  }
  return checkScalar(type as GraphQLScalarType, value, path);
}

function checkScalar(type: GraphQLScalarType, value: unknown, path: (string | number)[]): FieldIssue[] {
  const bad = (what: string): FieldIssue[] => [{ path, detail: `${label(path)} must be ${what}` }];
  switch (type.name) {
    case 'String':
    case 'ID':
      return typeof value === 'string' ? [] : bad('a string');
    case 'Int':
      return Number.isInteger(value) && Math.abs(value as number) <= INT_MAX ? [] : bad('an integer');
    case 'Float':
      return typeof value === 'number' && Number.isFinite(value) ? [] : bad('a number');
    case 'Boolean':
      return typeof value === 'boolean' ? [] : bad('true or false');
    default:
      try {
        type.parseValue(value);
        return [];
      } catch {
        return bad(type.name === 'DateTimeISO' ? 'an ISO 8601 date-time' : 'a valid value');
      }
  }
}
