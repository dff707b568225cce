import { armRequest, type Arm } from './measure';
import type { LoadOp } from './ops';

/** The answers' JSON as far as these checks read it: a REST page or record, or a GraphQL (PostGraphile) answer. */
interface Answer {
  results?: Record<string, unknown>[];
  limit?: number;
  skip?: number;
  size?: number;
  _links?: { next?: unknown };
  data?: {
    result?: { results?: unknown; limit?: unknown; skip?: unknown; size?: unknown };
    allGroups?: { nodes?: Record<string, unknown>[]; pageInfo?: { hasNextPage?: boolean } };
  };
  errors?: unknown;
}

async function get(url: string, req: ReturnType<typeof armRequest>) {
  const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Answer | undefined };
}

/** Same keys in the same order, all the way down (ids of created records differ by nature). */
const shape = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(shape) : v && typeof v === 'object' ? Object.keys(v).map((k) => [k, shape((v as Record<string, unknown>)[k])]) : typeof v;

/**
 * Before measuring: every arm must answer each op with the same JSON (reads: equal;
 * creates: the same shape), or the comparison means nothing. Returns notes for the report.
 */
export async function checkSameJson(serviceUrl: string, rawUrl: string, key: string, ops: LoadOp[]): Promise<string[]> {
  const notes: string[] = [];
  const same: string[] = [];
  for (const op of ops) {
    const rest = await get(serviceUrl, armRequest('rest', op, key));
    const raw = await get(rawUrl, armRequest('raw', op, key));
    const gql = await get(serviceUrl, armRequest('graphql', op, key));
    if (rest.status >= 300) throw new Error(`bench: ${op.label} answered ${rest.status}: ${JSON.stringify(rest.body)}`);
    let data = gql.body?.data?.result;
    if (op.list && data) data = { results: data.results, limit: data.limit, skip: data.skip, size: data.size };
    const restCore = op.list ? { results: rest.body!.results, limit: rest.body!.limit, skip: rest.body!.skip, size: rest.body!.size } : rest.body;
    const eq = (a: unknown, b: unknown) => (op.method === 'GET' ? JSON.stringify(a) === JSON.stringify(b) : JSON.stringify(shape(a)) === JSON.stringify(shape(b)));
    const problems: string[] = [];
    if (raw.status !== rest.status || !eq(rest.body, raw.body)) problems.push(`raw answers differently (${raw.status}: ${JSON.stringify(raw.body).slice(0, 200)})`);
    if (gql.body?.errors || !eq(restCore, data)) problems.push(`GraphQL answers differently (${JSON.stringify(gql.body).slice(0, 200)})`);
    if (problems.length) notes.push(`${op.label}: ${problems.join('; ')}`);
    else same.push(op.id);
  }
  if (same.length) notes.push(`Checked before measuring: REST, GraphQL (its \`result\`) and raw answer the same JSON for ${same.join(', ')}.`);
  return notes;
}

/** Timestamps compared to the millisecond, whatever the notation (PostgreSQL's `+00:00` and microseconds, or JSON's `Z`). */
const normalise = (row: Record<string, unknown>) =>
  Object.fromEntries(
    Object.keys(row)
      .sort()
      .map((k) => [k, typeof row[k] === 'string' && /^\d{4}-\d\d-\d\dT/.test(row[k] as string) ? new Date(row[k] as string).toISOString() : row[k]]),
  );

/**
 * The peers (PostGraphile) must return the same records as the REST route, in the same
 * order, with every field the route answers, and agree on whether a next page exists.
 * Returns notes for the report; a peer that answers differently is named there.
 */
export async function checkPeers(serviceUrl: string, peers: { arm: Arm; url: string }[], key: string, ops: LoadOp[]): Promise<string[]> {
  const notes: string[] = [];
  for (const op of ops.filter((o) => o.peer)) {
    const rest = await get(serviceUrl, armRequest('rest', op, key));
    const want = JSON.stringify((rest.body?.results ?? []).map(normalise));
    for (const { arm, url } of peers) {
      const res = await get(url, armRequest(arm, op, key));
      const page = res.body?.data?.allGroups;
      const got = JSON.stringify((page?.nodes ?? []).map(normalise));
      const sameNext = Boolean(page?.pageInfo?.hasNextPage) === Boolean(rest.body?._links?.next);
      if (res.status !== 200 || res.body?.errors || got !== want || !sameNext) {
        notes.push(`${op.label}: ${arm} answers differently (${res.status}: ${JSON.stringify(res.body).slice(0, 300)})`);
      } else {
        notes.push(`Checked before measuring: ${arm} returns the same ${rest.body!.results!.length} records as REST for ${op.id} (every field, same order, same next-page answer).`);
      }
    }
  }
  return notes;
}
