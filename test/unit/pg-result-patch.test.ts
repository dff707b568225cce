import fs from 'node:fs';
import fc from 'fast-check';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Result = require('pg/lib/result.js') as new (rowMode?: string) => {
  addFields(fields: { name: string; dataTypeID: number; format: string }[]): void;
  parseRow(values: (string | null)[]): Record<string, unknown>;
};
import { describe, expect, it } from 'vitest';

/**
 * patches/pg+8.20.0.patch (docs/performance.md, "A page's rows"): pg makes a row object with one
 * literal compiled per column list. What it hands on must not change: the keys in the same order,
 * the last of two columns of one name winning, NULL as null and every other value through its
 * column's parser. One difference, on purpose: a column named __proto__ is an own property of the
 * row, where pg's own algorithm set the row's prototype to its value.
 */
const TEXT = 25;
const INT4 = 23;
const BOOL = 16;

/** pg 8.20's own algorithm: a copy of an object with every name set to null, then each column stored by name. */
function reference(fields: { name: string; dataTypeID: number }[], values: (string | null)[], parse: (id: number, v: string) => unknown) {
  const empty: Record<string, unknown> = {};
  for (const f of fields) empty[f.name] = null;
  const row: Record<string, unknown> = { ...empty };
  fields.forEach((f, i) => (row[f.name] = values[i] === null ? null : parse(f.dataTypeID, values[i]!)));
  return row;
}
const parsed = (id: number, v: string) => (id === INT4 ? parseInt(v, 10) : id === BOOL ? v === 't' : v);
const describeRow = (row: Record<string, unknown>) => ({ proto: Object.getPrototypeOf(row) === Object.prototype, entries: Object.entries(row), own: Object.getOwnPropertyNames(row) });

describe('pg, patched row objects', () => {
  it('is the installed Result', () => {
    expect(fs.readFileSync(require.resolve('pg/lib/result.js'), 'utf8')).toContain('Patched (community-api');
  });

  it('a column named __proto__ is an own property, not the prototype', () => {
    const r = new Result();
    r.addFields([{ name: '__proto__', dataTypeID: TEXT, format: 'text' }, { name: 'id', dataTypeID: INT4, format: 'text' }]);
    const row = r.parseRow(['x', '7']);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(row)).toEqual(['__proto__', 'id']);
    expect(row.id).toBe(7);
  });

  it('any columns and values: the row pg made before', () => {
    // __proto__ apart (the test above): pg's own algorithm stored such a column as the row's prototype.
    const name = fc.oneof(fc.constantFrom('id', 'name', 'constructor', 'toString', '1', '01', '', 'a"b', 'a\\b', 'line\u2028sep', 'é'), fc.string({ maxLength: 6 })).filter((n) => n !== '__proto__');
    const column = fc.record({ name, dataTypeID: fc.constantFrom(TEXT, INT4, BOOL) });
    fc.assert(
      fc.property(fc.array(column, { maxLength: 8 }), fc.array(fc.option(fc.nat(), { nil: null }), { minLength: 8, maxLength: 8 }), (fields, raw) => {
        const values = fields.map((f, i) => (raw[i] === null ? null : f.dataTypeID === BOOL ? (raw[i]! % 2 ? 't' : 'f') : String(raw[i])));
        const r = new Result();
        r.addFields(fields.map((f) => ({ ...f, format: 'text' })));
        expect(describeRow(r.parseRow(values))).toEqual(describeRow(reference(fields, values, parsed)));
      }),
      { numRuns: 500, seed: 20261128 },
    );
  });
});
