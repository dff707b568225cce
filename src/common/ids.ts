import { randomBytes } from 'node:crypto';

/**
 * `n` UUIDs in version 7 layout (48-bit millisecond time, then a 12-bit counter) that
 * sort in generation order. Rows written together share one createdAt and lists break
 * createdAt ties by id, so a bulk insert lists in input order; time-ordered keys also
 * keep B-tree inserts local. Past 4096 ids the time field moves on by one millisecond
 * per 4096, so the order holds for any n.
 */
export function orderedIds(n: number): string[] {
  const start = Date.now();
  const tail = randomBytes(8);
  tail[0] = (tail[0] & 0x3f) | 0x80; // RFC 9562 variant
  return Array.from({ length: n }, (_, i) => {
    const b = Buffer.alloc(16);
    b.writeUIntBE(start + Math.floor(i / 4096), 0, 6);
    b[6] = 0x70 | ((i >> 8) & 0x0f);
    b[7] = i & 0xff;
    tail.copy(b, 8);
    const hex = b.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  });
}

export const newId = (): string => orderedIds(1)[0];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are opaque to clients; anything that is not one of ours simply matches nothing. */
export const isId = (value: string): boolean => UUID.test(value);
