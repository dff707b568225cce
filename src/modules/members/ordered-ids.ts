import { randomBytes } from 'node:crypto';

/**
 * `n` UUIDs (version 7 layout: time, then a counter) that sort in generation order.
 * A bulk insert's rows share one createdAt, and lists break createdAt ties by id, so
 * these ids make a batch list in input order. n <= 4096 (12-bit counter).
 */
export function orderedIds(n: number): string[] {
  const time = Date.now();
  const tail = randomBytes(8);
  tail[0] = (tail[0] & 0x3f) | 0x80; // RFC 9562 variant
  return Array.from({ length: n }, (_, i) => {
    const b = Buffer.alloc(16);
    b.writeUIntBE(time, 0, 6);
    b[6] = 0x70 | ((i >> 8) & 0x0f);
    b[7] = i & 0xff;
    tail.copy(b, 8);
    const hex = b.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  });
}
