import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { bodyPointer, intParam, pointerFor, sortParam, type QueryIssue } from '../../src/rest/params';

// These helpers read only `req.query`, as Express parsed it (a repeated parameter is an array).
const query = (q: Record<string, unknown>) => ({ query: q }) as unknown as Request;
const allowed = ['createdAt', 'name'];

function sort(value: unknown) {
  const issues: QueryIssue[] = [];
  return { specs: sortParam(query({ sort: value }), allowed, issues), issues };
}

describe('sortParam', () => {
  it('reads field:direction lists; the direction defaults to asc and ignores case', () => {
    expect(sort('name:desc,createdAt').specs).toEqual([
      { field: 'name', direction: 'DESC' },
      { field: 'createdAt', direction: 'ASC' },
    ]);
    expect(sort(' name:DESC ').specs).toEqual([{ field: 'name', direction: 'DESC' }]);
  });

  it('is absent when not given', () => {
    expect(sortParam(query({}), allowed, [])).toBeUndefined();
  });

  it('reports an unknown field, a bad direction, an extra colon and an empty part', () => {
    const { issues } = sort('age,name:up,createdAt:asc:x,');
    expect(issues).toEqual([
      { pointer: '#/query/sort', detail: 'sort field "age" is not sortable; use one of createdAt, name' },
      { pointer: '#/query/sort', detail: 'sort direction of "name" must be asc or desc' },
      { pointer: '#/query/sort', detail: 'sort direction of "createdAt" must be asc or desc' },
      { pointer: '#/query/sort', detail: 'sort field "" is not sortable; use one of createdAt, name' },
    ]);
  });

  it('reports a parameter given twice', () => {
    expect(sort(['name', 'createdAt']).issues).toEqual([{ pointer: '#/query/sort', detail: 'sort must be given once, as a plain value' }]);
  });
});

describe('intParam', () => {
  it('takes 32-bit integers only', () => {
    const issues: QueryIssue[] = [];
    expect(intParam(query({ limit: '-5' }), 'limit', issues)).toBe(-5);
    expect(intParam(query({ limit: '2147483647' }), 'limit', issues)).toBe(2 ** 31 - 1);
    expect(issues).toEqual([]);
    for (const bad of ['1.5', '1e3', '', ' 1', '0x10', '-2147483648']) {
      const found: QueryIssue[] = [];
      expect(intParam(query({ limit: bad }), 'limit', found)).toBeUndefined();
      expect(found).toEqual([{ pointer: '#/query/limit', detail: 'limit must be an integer' }]);
    }
    // An integer past the document's maximum is told so (it said "must be an integer").
    for (const big of ['2147483648', '9'.repeat(400)]) {
      const found: QueryIssue[] = [];
      expect(intParam(query({ skip: big }), 'skip', found)).toBeUndefined();
      expect(found).toEqual([{ pointer: '#/query/skip', detail: 'skip must be at most 2147483647' }]);
    }
  });
});

describe('pointers', () => {
  it('escape ~ and / (RFC 6901) and map an issue to where the client put the value', () => {
    expect(bodyPointer(['a/b', 'c~d', 0])).toBe('/a~1b/c~0d/0');
    expect(bodyPointer([])).toBe('');
    const sources = new Map([['input', 'body'], ['limit', '#/query/limit']]);
    expect(pointerFor({ path: ['input', 'members', 3, 'emailAddress'], detail: '' }, sources)).toBe('/members/3/emailAddress');
    expect(pointerFor({ path: ['input'], detail: '' }, sources)).toBe('/');
    expect(pointerFor({ path: ['limit'], detail: '' }, sources)).toBe('#/query/limit');
  });
});
