import { GraphQLBoolean, GraphQLInputObjectType, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { csvInput, csvRowType } from '../../src/rest/csv';
import type { QueryIssue } from '../../src/rest/params';

const Row = new GraphQLInputObjectType({
  name: 'Row',
  fields: {
    externalId: { type: new GraphQLNonNull(GraphQLString) },
    name: { type: GraphQLString },
    visible: { type: GraphQLBoolean },
    count: { type: GraphQLInt },
    groups: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
    nested: { type: new GraphQLList(new GraphQLList(GraphQLString)) },
  },
});
const Body = new GraphQLNonNull(new GraphQLInputObjectType({ name: 'Body', fields: { rows: { type: new GraphQLList(Row) } } }));
const binding = { rows: 'rows' };

function read(text: string) {
  const issues: QueryIssue[] = [];
  return { value: csvInput(text, Body, binding, issues), issues };
}

describe('csvInput', () => {
  it('reads typed cells; an empty cell is an absent field; columns in any order; BOM and blank lines skipped', () => {
    const { value, issues } = read('\uFEFFname,externalId,visible,count,groups\n"Board, main",b1,TRUE,-3,g1; g2;\n\n,b2,0,,\n');
    expect(issues).toEqual([]);
    expect(value).toEqual({
      rows: [
        { name: 'Board, main', externalId: 'b1', visible: true, count: -3, groups: ['g1', 'g2'] },
        { externalId: 'b2', visible: false },
      ],
    });
  });

  it('reports header problems (unknown, repeated, missing required, not expressible in CSV) before any row', () => {
    const { value, issues } = read('name,name,colour,nested\nx,y,z,w\n');
    expect(value).toBeUndefined();
    expect(issues.map((i) => i.pointer)).toEqual(['#/header/name', '#/header/colour', '#/header/nested', '#/header/externalId']);
  });

  it('points at the row and field of a bad cell, counting data rows from 1 in the detail', () => {
    const { value, issues } = read('externalId,visible,count,groups\n,yes,1x,\nb2,1,2,g1\n');
    expect(value).toBeUndefined();
    expect(issues).toEqual([
      { pointer: '/rows/0/externalId', detail: 'externalId is required (data row 1)' },
      { pointer: '/rows/0/visible', detail: 'visible must be true or false (data row 1)' },
      { pointer: '/rows/0/count', detail: 'count must be an integer (data row 1)' },
    ]);
  });

  it('lists at most 100 problems', () => {
    const lines = ['externalId,visible', ...Array.from({ length: 150 }, (_, i) => `r${i},maybe`)];
    const { issues } = read(lines.join('\n'));
    expect(issues).toHaveLength(101);
    expect(issues[100]).toEqual({ pointer: '/', detail: 'Only the first 100 problems are listed' });
  });

  it('reports unreadable CSV at the root', () => {
    const { value, issues } = read('externalId,name\n"open,x\n');
    expect(value).toBeUndefined();
    expect(issues).toHaveLength(1);
    expect(issues[0].pointer).toBe('/');
  });

  it('refuses at boot a binding whose rows are not a list of input objects', () => {
    expect(() => csvRowType(Body, { rows: 'missing' })).toThrow('csv.rows "missing" is not a list of input objects');
  });
});
