import { describe, expect, it } from 'vitest';
import { isId, orderedIds } from '../../src/common/ids';
import { bulkSizeIssues, Checks, MAX_BULK, rejectInvalid, under } from '../../src/common/validate';
import { arrayOf } from '../../src/db/sql';
import { AppError } from '../../src/errors/app-error';

describe('Checks', () => {
  it('collects issues relative to the checked value, without throwing', () => {
    const checks = new Checks()
      .string('name', '', { min: 1, max: 3 })
      .string('code', 'a\u0000', { max: 5 })
      .string('color', '#12', { max: 7, pattern: /^#[0-9a-f]{6}$/, patternText: '#RRGGBB' })
      .string('about', null, { max: 5, nullable: true })
      .string('title', null, { max: 5 })
      .notNull('flag', null)
      .required('kind', undefined)
      .nest(['items', 2], [{ path: ['id'], detail: 'bad id' }]);
    expect(checks.ok).toBe(false);
    expect(checks.issues).toEqual([
      { path: ['name'], detail: 'name must be 1-3 characters long' },
      { path: ['code'], detail: 'code must not contain NUL characters' },
      { path: ['color'], detail: 'color must match #RRGGBB' },
      { path: ['title'], detail: 'title must not be null' },
      { path: ['flag'], detail: 'flag must not be null' },
      { path: ['kind'], detail: 'kind is required' },
      { path: ['items', 2, 'id'], detail: 'bad id' },
    ]);
  });

  it('places issues where the value sits, and throws one 400 only from done()/rejectInvalid()', () => {
    expect(under(['input', 'members', 3], [{ path: ['emailAddress'], detail: 'x' }])).toEqual([{ path: ['input', 'members', 3, 'emailAddress'], detail: 'x' }]);
    expect(() => rejectInvalid([])).not.toThrow();
    try {
      new Checks().string('name', 'abcd', { max: 3 }).done(['input']);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('VALIDATION');
      expect((err as AppError).issues).toEqual([{ path: ['input', 'name'], detail: 'name must be at most 3 characters long' }]);
    }
  });
});

describe('bulkSizeIssues', () => {
  it('takes 1 to MAX_BULK items and names the list otherwise', () => {
    expect(bulkSizeIssues(['input', 'members'], 1)).toEqual([]);
    expect(bulkSizeIssues(['input', 'members'], MAX_BULK)).toEqual([]);
    expect(bulkSizeIssues(['input', 'members'], 0)).toEqual([{ path: ['input', 'members'], detail: 'members must hold 1-1000 items, got 0' }]);
    expect(bulkSizeIssues(['input', 'groupMemberships'], MAX_BULK + 1)).toEqual([
      { path: ['input', 'groupMemberships'], detail: 'groupMemberships must hold 1-1000 items, got 1001' },
    ]);
  });
});

describe('arrayOf', () => {
  it('quotes every element, escaping quotes and backslashes, so commas and braces stay data', () => {
    expect(arrayOf([])).toBe('{}');
    expect(arrayOf(['a', 'b,c', '{d}', 'e"f', 'g\\h', ''])).toBe('{"a","b,c","{d}","e\\"f","g\\\\h",""}');
  });
});

describe('orderedIds', () => {
  it('are version 7 UUIDs that sort in generation order, also past 4096 in one call', () => {
    const ids = orderedIds(10_000);
    expect(new Set(ids).size).toBe(10_000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => isId(id) && id[14] === '7')).toBe(true);
  });
});
