import { describe, expect, it } from 'vitest';
import { MAX_LIMIT, pageWindow, SortDirection, toPage } from '../../src/common/pagination';
import { AppError } from '../../src/errors/app-error';

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err.issues;
    throw err;
  }
  return [];
}

describe('pageWindow', () => {
  it('defaults to 20 from 0, ordered by createdAt then id', () => {
    expect(pageWindow({})).toEqual({ limit: 20, skip: 0, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  });

  it('takes limit 1..100 and skip >= 0, and reports both at once otherwise', () => {
    expect(pageWindow({ limit: 1, skip: 0 }).limit).toBe(1);
    expect(pageWindow({ limit: MAX_LIMIT, skip: 10_000 }).limit).toBe(100);
    expect(issuesOf(() => pageWindow({ limit: 0, skip: -1 }))).toEqual([
      { path: ['limit'], detail: 'limit must be an integer from 1 to 100' },
      { path: ['skip'], detail: 'skip must be an integer of at least 0' },
    ]);
    expect(issuesOf(() => pageWindow({ limit: 101 }))).toHaveLength(1);
    expect(issuesOf(() => pageWindow({ limit: 2.5 }))).toHaveLength(1);
  });

  it('keeps the first of a repeated sort field, and ends every order with createdAt (unless given) and id', () => {
    const { orderBy } = pageWindow({
      sort: [
        { field: 'name', direction: SortDirection.DESC },
        { field: 'name', direction: SortDirection.ASC },
        { field: 'createdAt', direction: SortDirection.DESC },
      ],
    });
    expect(orderBy).toEqual([{ name: 'desc' }, { createdAt: 'desc' }, { id: 'asc' }]);
  });
});

describe('toPage', () => {
  it('reads one row more than the page to know whether a next page exists', () => {
    expect(toPage([1, 2, 3], 2, 4)).toEqual({ results: [1, 2], limit: 2, skip: 4, size: 2, hasNextPage: true });
    expect(toPage([1, 2], 2, 0)).toEqual({ results: [1, 2], limit: 2, skip: 0, size: 2, hasNextPage: false });
    expect(toPage([], 2, 0)).toEqual({ results: [], limit: 2, skip: 0, size: 0, hasNextPage: false });
  });
});
