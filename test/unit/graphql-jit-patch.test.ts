import { execute, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { describe, expect, it } from 'vitest';

/**
 * patches/graphql-jit+0.8.9.patch (docs/performance.md, "graphql-jit's leaf checks"): a compiled
 * leaf field no longer builds its error's locations and path as arguments of every call; a
 * hoisted function builds them when the leaf fails. What a client sees must not change: every
 * leaf failure answers what graphql-js answers, message, locations, path and original error.
 */
const boom = new Error('leaf exploded');
const Item = new GraphQLObjectType({
  name: 'Item',
  fields: {
    name: { type: new GraphQLNonNull(GraphQLString), resolve: (i: { n: number }) => (i.n === 1 ? null : `item ${i.n}`) },
    label: { type: GraphQLString, resolve: (i: { n: number }) => (i.n === 2 ? boom : `label ${i.n}`) },
    count: { type: GraphQLInt, resolve: (i: { n: number }) => (i.n === 0 ? 'many' : i.n) },
    size: { type: new GraphQLNonNull(GraphQLInt), resolve: (i: { n: number }) => (i.n === 2 ? 2 ** 40 : i.n) },
  },
});
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      rows: { type: new GraphQLList(new GraphQLList(Item)), resolve: () => [[{ n: 0 }, { n: 1 }], [{ n: 2 }, { n: 3 }]] },
      top: { type: new GraphQLNonNull(GraphQLString), resolve: () => null },
      topError: { type: GraphQLString, resolve: () => boom },
      fine: { type: GraphQLInt, resolve: () => 7 },
    },
  }),
});

const answer = (r: { data?: unknown; errors?: readonly { message: string; locations?: unknown; path?: unknown; originalError?: unknown }[] }) => ({
  data: r.data,
  errors: [...(r.errors ?? [])]
    .map((e) => ({ message: e.message, locations: e.locations, path: e.path, original: e.originalError === boom }))
    .sort((a, b) => JSON.stringify(a.path).localeCompare(JSON.stringify(b.path))),
});

describe('graphql-jit, patched leaf checks', () => {
  it.each([
    ['nested lists: a null non-null leaf, an Error as a value, unserializable Ints', '{ rows { name label count size } }'],
    ['top-level leaves: a null non-null leaf nulls the data, an Error as a value', '{ topError fine top }'],
    ['no failure', '{ fine }'],
  ])('%s: the same answer as graphql-js', async (_, query) => {
    const document = parse(query);
    const compiled = compileQuery(schema, document);
    if (!isCompiledQuery(compiled)) throw new Error('not compiled');
    const jit = await compiled.query(undefined, {}, {});
    const plain = await execute({ schema, document });
    expect(answer(jit)).toEqual(answer(plain));
    if (query.includes('rows')) expect(answer(jit).errors.length).toBe(4);
  });

  it('a compiled leaf call carries no location or path literal (what the patch removes)', () => {
    const compiled = compileQuery(schema, parse('{ rows { name label count size } fine }'), undefined, { debug: true } as never);
    const source = (compiled as unknown as { __DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation: string }).__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation;
    const calls = source.match(/check(NonNull|Nullable)Leaf\([^\n]*/g) ?? [];
    expect(calls.length).toBe(5);
    for (const call of calls) {
      expect(call).not.toContain('"line"');
      expect(call).toMatch(/LeafError/);
    }
  });
});
