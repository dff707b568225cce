import 'reflect-metadata';
import fc from 'fast-check';
import {
  getOperationAST,
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  typeFromAST,
  type ExecutionResult,
  type GraphQLInputType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/graphql/schema';
import { compileDocument } from '../../src/graphql/jit';
import { compileRoutes } from '../../src/rest/compile';
import { routes } from '../../src/rest/routes';

/**
 * compileDocument (src/graphql/jit.ts) coerces a request's variables once, with graphql-jit's
 * compiled parser, and asks graphql-js only when graphql-jit refuses them: a variable
 * graphql-js refuses never reaches a resolver, and is answered with graphql-js's errors
 * (message, node: BAD_USER_INPUT); a variable graphql-js accepts is executed. Checked here for
 * the variables of every REST route's document, with values built from each variable's type,
 * mostly valid and sometimes broken (a wrong scalar, null, a missing or unknown field, an
 * out-of-range Int, a bare value for a list, a list for an input object). No resolver does
 * real work: the context is empty, so an accepted request fails in its resolvers, with data.
 *
 * This property is what keeps graphql-jit's parser to graphql-js's rules. Run against
 * graphql-jit 0.8.9 as published it found two differences, both patched
 * (patches/graphql-jit+0.8.9.patch): graphql-jit took a list for an input object (`{ "filter":
 * [] }` for `getGroups` reached the resolvers), and it refused a required input field left out
 * that has a default (`sort: [{ field: createdAt }]`, where graphql-js takes direction ASC).
 * Wider runs (3,000 values a document, random seeds, three times) found no other.
 */
const schema = buildSchema();

const junk = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.double(), fc.boolean(), fc.constant({}), fc.constant([]), fc.constant(null));

/** Each scalar: mostly valid values, sometimes one it must refuse. */
const scalar = (valid: fc.Arbitrary<unknown>, invalid: unknown[]) => fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });
const SCALARS: Record<string, fc.Arbitrary<unknown>> = {
  Int: scalar(fc.integer({ min: -5, max: 500 }), [2 ** 31, -(2 ** 31) - 1, 1.5, '7', Number.NaN]),
  Float: scalar(fc.double({ noNaN: true, noDefaultInfinity: true }), ['1.5', Infinity]),
  String: scalar(fc.string({ maxLength: 8 }), [7, true]),
  Boolean: scalar(fc.boolean(), ['true', 0]),
  ID: scalar(fc.oneof(fc.uuid(), fc.integer()), [1.5, false]),
  DateTimeISO: scalar(fc.constantFrom('2026-11-27T10:00:00.000Z', '2026-11-27T10:00:00Z'), ['2026-02-30T00:00:00Z', 'yesterday', 17]),
  JSONObject: scalar(fc.object({ maxDepth: 1 }), ['{}', 3, []]),
};

function valueOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return fc.oneof({ weight: 12, arbitrary: valueOf(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  const inner = ((): fc.Arbitrary<unknown> => {
    if (isListType(type)) {
      const item = valueOf(type.ofType, depth + 1);
      return fc.oneof({ weight: 6, arbitrary: fc.array(item, { maxLength: 3 }) }, { weight: 1, arbitrary: item });
    }
    if (isEnumType(type)) return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...type.getValues().map((v) => v.name)) }, { weight: 1, arbitrary: junk });
    if (isScalarType(type)) {
      const values = SCALARS[type.name];
      if (!values) throw new Error(`no values for scalar ${type.name}: add them to SCALARS`);
      return values;
    }
    if (isInputObjectType(type)) {
      if (depth > 3) return fc.constant({});
      const fields = Object.values(type.getFields());
      const record = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, depth + 1)])), {
        requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name),
      });
      return fc.oneof(
        { weight: 10, arbitrary: record },
        { weight: 1, arbitrary: record.map((r) => ({ ...r, notAField: 1 })) },
        { weight: 1, arbitrary: fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, depth + 1)])), { requiredKeys: [] }) },
        { weight: 1, arbitrary: junk },
      );
    }
    throw new Error(`unexpected input type ${String(type)}`);
  })();
  return fc.oneof({ weight: 12, arbitrary: inner }, { weight: 1, arbitrary: fc.constant(null) });
}

const documents = compileRoutes(schema, routes)
  .map((route) => ({ id: route.operationId, document: route.parsed, definitions: getOperationAST(route.parsed)?.variableDefinitions ?? [] }))
  .filter((d) => d.definitions.length > 0);

describe('compiled documents coerce variables as graphql-js does', () => {
  it('covers the routes', () => {
    expect(documents.length).toBeGreaterThan(20);
  });

  it.each(documents.map((d) => [d.id, d] as const))('%s: variables graphql-js refuses reach no resolver and get its errors', async (_id, d) => {
    const run = compileDocument(schema, d.document);
    const variables = fc.record(
      Object.fromEntries(d.definitions.map((v) => [v.variable.name.value, valueOf(typeFromAST(schema, v.type as never) as GraphQLInputType)])),
      { requiredKeys: [] },
    );
    let refused = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(variables, async (vars) => {
        const js = getVariableValues(schema, d.definitions, vars, { maxErrors: 50 });
        const result = (await run({}, vars)) as ExecutionResult;
        if (js.errors) {
          refused++;
          expect(result.data).toBeUndefined();
          expect(result.errors?.map((e) => e.message)).toEqual(js.errors.map((e) => e.message));
          expect(result.errors?.[0].nodes?.length).toBeGreaterThan(0);
        } else {
          accepted++;
          expect(result.data, JSON.stringify(result.errors?.[0]?.message)).not.toBeUndefined();
        }
      }),
      { seed: 20261127, numRuns: 150 },
    );
    // Both sides of the property were exercised for this document.
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
  });
});
