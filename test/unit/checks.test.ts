import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { Checks, ruleIssues } from '../../src/common/validate';
import { CreateGroupInput } from '../../src/modules/groups/group.inputs';
import { retryDeadlocks } from '../../src/db/transaction';

describe('Checks.int', () => {
  it('accepts integers within the bounds and absent values', () => {
    expect(new Checks().int('n', 1, { min: 1, max: 3 }).int('n', 3, { min: 1, max: 3 }).int('n', undefined, { min: 1, max: 3 }).issues).toEqual([]);
  });

  it('names the field for a fraction, a value out of bounds, and null where the rule refuses it', () => {
    expect(new Checks().int('limit', 1.5, { min: 1, max: 100 }).int('limit', 101, { min: 1, max: 100 }).issues).toEqual([
      { path: ['limit'], detail: 'limit must be an integer from 1 to 100' },
      { path: ['limit'], detail: 'limit must be an integer from 1 to 100' },
    ]);
    expect(new Checks().int('skip', -1, { min: 0 }).int('rate', 0, { min: 1 }).int('order', null, { min: 0, max: 9, nullable: false }).issues).toEqual([
      { path: ['skip'], detail: 'skip must be an integer of at least 0' },
      { path: ['rate'], detail: 'rate must be a positive integer' },
      { path: ['order'], detail: 'order must not be null' },
    ]);
  });
});

describe('Checks.list', () => {
  it('checks the size against minItems and maxItems', () => {
    expect(new Checks().list('rows', [1], { minItems: 1, maxItems: 2 }).issues).toEqual([]);
    expect(new Checks().list('rows', [], { minItems: 1, maxItems: 2 }, 'rows').issues).toEqual([{ path: ['rows'], detail: 'rows must hold 1-2 rows, got 0' }]);
    expect(new Checks().list('ids', [1, 2, 3], { maxItems: 2 }).list('tags', [], { minItems: 1 }).issues).toEqual([
      { path: ['ids'], detail: 'ids must hold at most 2 items, got 3' },
      { path: ['tags'], detail: 'tags must hold at least 1 items, got 0' },
    ]);
  });
});

describe('ruleIssues', () => {
  it('checks a value against the @Rule of each field its input type declares, in declaration order', () => {
    expect(ruleIssues(CreateGroupInput, { name: 'Board' })).toEqual([]);
    expect(ruleIssues(CreateGroupInput, { externalId: 'a b', name: '', color: 'red', isVisibleInApp: null })).toEqual([
      { path: ['externalId'], detail: 'externalId must match ^[A-Za-z0-9@_.-]+$' },
      { path: ['name'], detail: 'name must be 1-256 characters long' },
      { path: ['color'], detail: 'color must match #RRGGBB (six hexadecimal digits)' },
      { path: ['isVisibleInApp'], detail: 'isVisibleInApp must not be null' },
    ]);
  });
});

describe('retryDeadlocks (the one retry policy)', () => {
  const again = (err: unknown) => (err as Error).message === 'again';

  it('runs the work again on a retryable error, up to 6 attempts, and then lets the error through', async () => {
    let calls = 0;
    await expect(
      retryDeadlocks(async () => {
        calls++;
        throw new Error('again');
      }, again),
    ).rejects.toThrow('again');
    expect(calls).toBe(6);
    calls = 0;
    expect(await retryDeadlocks(async () => (++calls < 3 ? Promise.reject(new Error('again')) : 'done'), again)).toBe('done');
    expect(calls).toBe(3);
  });

  it('does not retry other errors (by default: anything but a deadlock)', async () => {
    let calls = 0;
    await expect(retryDeadlocks(async () => Promise.reject(new Error(`other ${++calls}`)))).rejects.toThrow('other 1');
  });
});
