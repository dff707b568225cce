import { median, timeOnce, type HttpRequest } from './load';
import type { Seeded } from './seed';

/**
 * What safe retries and conditional requests cost: the same request with and without the
 * feature, alternated one by one (so drift of a busy machine hits both alike), median ms
 * of the client's wall time. Reported in RESULTS.md; never asserted in tests.
 */
export interface SafetyCost {
  id: string;
  label: string;
  withLabel: string;
  withoutLabel: string;
  withMedian: number;
  withoutMedian: number;
  /** with / without: 1.10 means 10% more time with the feature. */
  ratio: number;
  reps: number;
}

const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });

async function pairs(reps: number, withIt: (rep: number) => Promise<number>, without: (rep: number) => Promise<number>) {
  const a: number[] = [];
  const b: number[] = [];
  for (let rep = -5; rep < reps; rep++) {
    // Warm-up pairs first (rep < 0), then alternate which one goes first.
    const first = rep % 2 ? [withIt, without] : [without, withIt];
    const times = [await first[0](rep), await first[1](rep)];
    if (rep < 0) continue;
    (first[0] === withIt ? a : b).push(times[0]);
    (first[1] === withIt ? a : b).push(times[1]);
  }
  return { withMedian: median(a), withoutMedian: median(b) };
}

async function ok(url: string, req: HttpRequest, expected: number): Promise<number> {
  const res = await timeOnce(url, req);
  if (res.status !== expected) throw new Error(`bench: ${req.method} ${req.path} answered ${res.status}, expected ${expected}: ${res.text.slice(0, 200)}`);
  return res.ms;
}

export async function timeSafety(url: string, key: string, s: Seeded, reps: number): Promise<SafetyCost[]> {
  const out: SafetyCost[] = [];
  const post = (rep: number, idem: boolean): HttpRequest => ({
    method: 'POST',
    path: '/api/v1/members',
    headers: { ...json(key), ...(idem ? { 'idempotency-key': `bench-${Date.now()}-${rep}` } : {}) },
    body: JSON.stringify({ firstName: `Safety ${rep}`, lastName: idem ? 'with key' : 'without key' }),
  });
  const created = await pairs(reps, (rep) => ok(url, post(rep, true), 201), (rep) => ok(url, post(rep, false), 201));
  out.push({
    id: 'idempotentPost',
    label: 'POST /members',
    withLabel: 'with Idempotency-Key',
    withoutLabel: 'without',
    ...created,
    ratio: created.withMedian / created.withoutMedian,
    reps,
  });

  // The case the feature exists for: a bulk that must not be applied twice (100 members).
  const bulk = (rep: number, idem: boolean): HttpRequest => ({
    method: 'POST',
    path: '/api/v1/members/_bulk',
    headers: { ...json(key), ...(idem ? { 'idempotency-key': `bench-bulk-${Date.now()}-${rep}` } : {}) },
    body: JSON.stringify({ members: Array.from({ length: 100 }, (_, i) => ({ firstName: `Bulk ${rep} ${i}`, lastName: idem ? 'with key' : 'without key' })) }),
  });
  const bulkReps = Math.max(10, Math.round(reps / 4));
  const bulked = await pairs(bulkReps, (rep) => ok(url, bulk(rep, true), 201), (rep) => ok(url, bulk(rep, false), 201));
  out.push({
    id: 'idempotentBulk',
    label: 'POST /members/_bulk (100)',
    withLabel: 'with Idempotency-Key',
    withoutLabel: 'without',
    ...bulked,
    ratio: bulked.withMedian / bulked.withoutMedian,
    reps: bulkReps,
  });

  const path = `/api/v1/groups/${s.bigGroupId}`;
  const full = await timeOnce(url, { method: 'GET', path, headers: { 'x-api-key': key } });
  const etag = (await fetch(url + path, { headers: { 'x-api-key': key } })).headers.get('etag');
  if (full.status !== 200 || !etag) throw new Error('bench: GET of the big group gave no ETag');
  const got = await pairs(
    reps,
    () => ok(url, { method: 'GET', path, headers: { 'x-api-key': key, 'if-none-match': etag } }, 304),
    () => ok(url, { method: 'GET', path, headers: { 'x-api-key': key } }, 200),
  );
  out.push({
    id: 'conditionalGet',
    label: 'GET /groups/{id}',
    withLabel: 'If-None-Match, answered 304',
    withoutLabel: 'full 200',
    ...got,
    ratio: got.withMedian / got.withoutMedian,
    reps,
  });
  return out;
}
