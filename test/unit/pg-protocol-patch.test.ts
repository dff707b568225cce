import fs from 'node:fs';
import fc from 'fast-check';
import { Parser } from 'pg-protocol/dist/parser';
import type { DataRowMessage } from 'pg-protocol/dist/messages';
import { describe, expect, it } from 'vitest';

/**
 * patches/pg-protocol+1.16.1.patch (docs/performance.md, "A page's rows"): a DataRow is decoded
 * once as latin1 and its ASCII fields are substrings of that text. What pg hands on must not
 * change: every field as its UTF-8 text, NULL as null, whatever the bytes of the fields and of
 * their lengths (a NULL's length is -1, four 0xff bytes; a length of 128-255 has a byte over 0x7f).
 */
function dataRow(fields: (string | null)[]): Buffer {
  const parts = fields.map((f) => {
    if (f === null) return Buffer.from([0xff, 0xff, 0xff, 0xff]);
    const bytes = Buffer.from(f, 'utf8');
    const len = Buffer.alloc(4);
    len.writeInt32BE(bytes.length);
    return Buffer.concat([len, bytes]);
  });
  const count = Buffer.alloc(2);
  count.writeInt16BE(fields.length);
  const body = Buffer.concat([count, ...parts]);
  const head = Buffer.alloc(5);
  head[0] = 0x44; // 'D'
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** The messages a parser reads from `bytes`, delivered in chunks cut at `cuts`. */
function parse(bytes: Buffer, cuts: number[] = []): DataRowMessage[] {
  const parser = new Parser();
  const out: DataRowMessage[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b).concat(bytes.length)) {
    parser.parse(bytes.subarray(from, cut), (m) => out.push(m as DataRowMessage));
    from = cut;
  }
  return out;
}

const field = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ minLength: 128, maxLength: 300 }),
  fc.uuid(),
);

describe('pg-protocol, patched DataRow parsing', () => {
  it('is the installed parser', () => {
    expect(fs.readFileSync(require.resolve('pg-protocol/dist/parser.js'), 'utf8')).toContain('Patched (community-api');
  });

  it('reads ASCII fields, NULLs, empty fields and long fields as they were sent', () => {
    const row = ['3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f', null, '', 'x'.repeat(200), 'tail', null];
    const [message] = parse(dataRow(row));
    expect(message.name).toBe('dataRow');
    expect(message.fields).toEqual(row);
    expect(message.fieldCount).toBe(row.length);
  });

  it('decodes a field with bytes over 0x7f as UTF-8, and the ASCII fields around it as before', () => {
    const row = ['plain', 'Zoë Ångström 🚀', 'also plain', null, 'ünïcödé', 'end'];
    expect(parse(dataRow(row))[0].fields).toEqual(row);
  });

  it('any rows, in any chunks: the fields pg would have read field by field', () => {
    fc.assert(
      fc.property(fc.array(fc.array(field, { maxLength: 12 }), { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 4 }), (rows, cuts) => {
        const bytes = Buffer.concat(rows.map(dataRow));
        const messages = parse(bytes, cuts);
        expect(messages.map((m) => m.fields)).toEqual(rows.map((r) => r.map((f) => (f === null ? null : Buffer.from(f, 'utf8').toString('utf8')))));
      }),
      { numRuns: 300, seed: 20261128 },
    );
  });
});
