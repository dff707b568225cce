import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { queryLimitsRule } from '../../src/graphql/limits';

const schema = buildSchema(`
  type Query { groups(limit: Int): [Group!]! group: Group }
  type Group { id: ID! name: String members(limit: Int): [Member!]! group: Group }
  type Member { id: ID! name: String }
`);

function errors(query: string, limits = { maxDepth: 4, maxCost: 1000 }) {
  return validate(schema, parse(query), [queryLimitsRule(limits)]).map((e) => e.message);
}

describe('queryLimitsRule', () => {
  it('counts each field as 1 plus its selection times its literal limit', () => {
    // groups: 1 + 10 * (id 1 + members (1 + 5 * 2)) = 1 + 10 * 12 = 121
    expect(errors('{ groups(limit: 10) { id members(limit: 5) { id name } } }', { maxDepth: 4, maxCost: 121 })).toEqual([]);
    expect(errors('{ groups(limit: 10) { id members(limit: 5) { id name } } }', { maxDepth: 4, maxCost: 120 })).toEqual([
      'Query cost 121 exceeds the maximum of 120',
    ]);
  });

  it('counts a limit given by a variable as 100, and a limit below 1 as 1', () => {
    expect(errors('query($n: Int) { groups(limit: $n) { id } }', { maxDepth: 4, maxCost: 100 })).toEqual(['Query cost 101 exceeds the maximum of 100']);
    expect(errors('{ groups(limit: 0) { id } }', { maxDepth: 4, maxCost: 2 })).toEqual([]);
  });

  it('counts the cost through fragments and inline fragments (depth is graphql-armor\'s rule)', () => {
    // group: 1 + (group: 1 + (group: 1 + id 1)) = 4
    const deep = 'query { group { ...G } } fragment G on Group { group { ... on Group { group { id } } } }';
    expect(errors(deep, { maxDepth: 4, maxCost: 4 })).toEqual([]);
    expect(errors(deep, { maxDepth: 4, maxCost: 3 })).toEqual(['Query cost 4 exceeds the maximum of 3']);
  });

  it("leaves introspection out, and ends on a fragment cycle (graphql-js's own rules report that)", () => {
    expect(errors('{ __schema { types { fields { type { ofType { name } } } } } }', { maxDepth: 2, maxCost: 1 })).toEqual([]);
    expect(errors('{ group { ...A } } fragment A on Group { group { ...A } }')).toEqual([]);
  });
});
