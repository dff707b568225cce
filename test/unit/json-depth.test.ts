import { describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH, tooDeep } from '../../src/common/json-depth';

/** The walk as it was written first (a path per value): the reference for the one without paths. */
function reference(value: unknown, max: number): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: { value: object; depth: number; path: (string | number)[] }[] = [{ value, depth: 1, path: [] }];
  while (stack.length) {
    const top = stack.pop()!;
    if (top.depth > max) return top.path;
    const entries: [string | number, unknown][] = Array.isArray(top.value) ? top.value.map((v, i) => [i, v]) : Object.entries(top.value);
    for (const [key, child] of entries) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: top.depth + 1, path: [...top.path, key] });
    }
  }
  return undefined;
}

/** A seeded generator of JSON values of varied shape and depth (deterministic). */
function generate(seed: number) {
  let s = seed;
  const next = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 12 || r < 0.25) return r < 0.1 ? null : r < 0.2 ? 'x' : 7;
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, (_, i) => [`k${i}`, value(depth + 1)]));
  };
  return value(0);
}

describe('tooDeep', () => {
  it('names the same value as the walk with paths, for deep and shallow bodies', () => {
    let deep = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const body = generate(seed);
      for (const max of [1, 2, 3, 5, 8, JSON_MAX_DEPTH]) {
        const expected = reference(body, max);
        if (expected) deep++;
        expect(tooDeep(body, max), `seed ${seed}, max ${max}`).toEqual(expected);
      }
    }
    expect(deep).toBeGreaterThan(100);
  });

  it('walks a bulk body of 10,000 items and refuses one nested past the limit at its place', () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ memberId: `m${i}`, extra: { a: [1, { b: 2 }] } }));
    expect(tooDeep({ groupMemberships: items }, JSON_MAX_DEPTH)).toBeUndefined();
    let nested: unknown = 1;
    for (let i = 0; i < 70; i++) nested = [nested];
    items[4321] = { memberId: 'deep', extra: nested as never };
    const path = tooDeep({ groupMemberships: items }, JSON_MAX_DEPTH)!;
    expect(path.slice(0, 3)).toEqual(['groupMemberships', 4321, 'extra']);
    expect(path).toHaveLength(JSON_MAX_DEPTH);
  });
});
