import { GraphQLBoolean, GraphQLEnumType, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { checkInputValue } from '../../src/rest/input-check';

const Color = new GraphQLEnumType({ name: 'Color', values: { RED: {}, BLUE: {} } });
const Item = new GraphQLInputObjectType({
  name: 'Item',
  fields: { id: { type: new GraphQLNonNull(GraphQLString) }, value: { type: GraphQLString } },
});
const Input = new GraphQLInputObjectType({
  name: 'Input',
  fields: {
    name: { type: new GraphQLNonNull(GraphQLString) },
    count: { type: GraphQLInt },
    visible: { type: GraphQLBoolean },
    color: { type: Color },
    items: { type: new GraphQLList(new GraphQLNonNull(Item)) },
  },
});
const body = new GraphQLNonNull(Input);

describe('checkInputValue', () => {
  it('accepts a valid body, and null or absent optional fields', () => {
    expect(checkInputValue(body, { name: 'a', count: 3, visible: false, color: 'RED', items: [{ id: 'x' }] })).toEqual([]);
    expect(checkInputValue(body, { name: 'a', count: null, items: null })).toEqual([]);
  });

  it('reports a missing body and a body that is not an object', () => {
    expect(checkInputValue(body, undefined)).toEqual([{ path: [], detail: 'The body is required' }]);
    expect(checkInputValue(body, null)).toEqual([{ path: [], detail: 'The body must not be null' }]);
    expect(checkInputValue(body, [])).toEqual([{ path: [], detail: 'The body must be a JSON object' }]);
  });

  it('reports every bad field at once, with its path', () => {
    const issues = checkInputValue(body, { count: '3', visible: 'yes', color: 'GREEN', id: 'x', items: [{ id: 1 }, null, { value: 'v' }] });
    expect(issues).toEqual([
      { path: ['id'], detail: 'id is unknown or read-only and cannot be written' },
      { path: ['name'], detail: 'name is required' },
      { path: ['count'], detail: 'count must be an integer' },
      { path: ['visible'], detail: 'visible must be true or false' },
      { path: ['color'], detail: 'color must be one of RED, BLUE' },
      { path: ['items', 0, 'id'], detail: 'items.0.id must be a string' },
      { path: ['items', 1], detail: 'items.1 must not be null' },
      { path: ['items', 2, 'id'], detail: 'items.2.id is required' },
    ]);
  });

  it('pins the Int range to 32 bits and rejects fractions', () => {
    expect(checkInputValue(body, { name: 'a', count: 2 ** 31 - 1 })).toEqual([]);
    expect(checkInputValue(body, { name: 'a', count: 2 ** 31 })).toEqual([{ path: ['count'], detail: 'count must be an integer' }]);
    expect(checkInputValue(body, { name: 'a', count: 1.5 })).toEqual([{ path: ['count'], detail: 'count must be an integer' }]);
  });

  it('wants an array for a list, and an object for an item', () => {
    expect(checkInputValue(body, { name: 'a', items: { id: 'x' } })).toEqual([{ path: ['items'], detail: 'items must be an array' }]);
    expect(checkInputValue(body, { name: 'a', items: ['x'] })).toEqual([{ path: ['items', 0], detail: 'items.0 must be a JSON object' }]);
  });

  it('a body refused for its shape also names the strings that break their rule (the same check the service makes)', () => {
    const Ruled = new GraphQLInputObjectType({
      name: 'Ruled',
      fields: {
        name: { type: GraphQLString, extensions: { rule: { kind: 'text', min: 1, max: 5, nullable: false } } },
        code: { type: GraphQLString, extensions: { rule: { kind: 'text', max: 9, pattern: /^[a-z]+$/, patternText: 'a-z' } } },
      },
    });
    // Shape fine: the rules are left to the service (no change for valid shapes).
    expect(checkInputValue(Ruled, { name: '', code: 'X' })).toEqual([]);
    // Shape broken: every field is named in one answer.
    expect(checkInputValue(Ruled, { name: '', code: 'X', state: 'ARCHIVED' })).toEqual([
      { path: ['state'], detail: 'state is unknown or read-only and cannot be written' },
      { path: ['name'], detail: 'name must be 1-5 characters long' },
      { path: ['code'], detail: 'code must match a-z' },
    ]);
  });
});
