import { GraphQLScalarType } from 'graphql';
import { GraphQLDateTimeISO } from 'graphql-scalars';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const base = GraphQLDateTimeISO.toConfig();

/**
 * graphql-scalars' DateTimeISO with a fast path on output: a Date, or a string already in
 * our ISO form (lean reads select it so), is written without re-validation. Input parsing
 * is unchanged. Every record carries two timestamps, so this runs twice per row.
 */
export const DateTimeISO = new GraphQLScalarType({
  ...base,
  serialize(value) {
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    if (typeof value === 'string' && ISO_MS.test(value)) return value;
    return base.serialize(value);
  },
});
