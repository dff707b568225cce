import { Client } from 'pg';
import { median, timeOnce, type HttpRequest } from './load';
import { bulkBody, documentOf, orderBody } from './ops';
import type { Seeded } from './seed';

export interface Timed {
  id: string;
  label: string;
  /** Wall time per run, ms, as the client sees it (upload, work, answer). */
  rest: number[];
  graphql: number[];
  restMedian: number;
  graphqlMedian: number;
  note?: string;
}

const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });
const gql = (key: string, operationId: string, variables: unknown): HttpRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: json(key),
  body: JSON.stringify({ query: documentOf(operationId), variables }),
});

async function expectOk(url: string, req: HttpRequest, what: string): Promise<number> {
  const res = await timeOnce(url, req);
  const failed = res.status >= 300 || (req.path === '/graphql' && res.text.includes('"errors"'));
  if (failed) throw new Error(`bench: ${what} failed with ${res.status}: ${res.text.slice(0, 300)}`);
  return res.ms;
}

/** Runs REST and GraphQL alternately `reps` times after one untimed warm-up each. */
async function alternate(reps: number, run: (arm: 'rest' | 'graphql', rep: number) => Promise<number>) {
  const out = { rest: [] as number[], graphql: [] as number[] };
  await run('rest', -1);
  await run('graphql', -2);
  for (let rep = 0; rep < reps; rep++) {
    for (const arm of rep % 2 ? (['graphql', 'rest'] as const) : (['rest', 'graphql'] as const)) out[arm].push(await run(arm, rep));
  }
  return out;
}

const done = (id: string, label: string, t: { rest: number[]; graphql: number[] }): Timed => ({
  id, label, ...t, restMedian: median(t.rest), graphqlMedian: median(t.graphql),
});

/** Bulk create of 1,000 memberships into a new, empty group per run. */
export async function timeBulk(url: string, key: string, s: Seeded, reps: number): Promise<Timed> {
  const t = await alternate(reps, async (arm, rep) => {
    const created = await timeOnce(url, { method: 'POST', path: '/api/v1/groups', headers: json(key), body: JSON.stringify({ name: `Bulk ${arm} ${rep}` }) });
    const groupId = JSON.parse(created.text).id as string;
    const body = bulkBody(s.memberIds, 1000, `bulk-${arm}-${rep}`);
    const req: HttpRequest = arm === 'rest'
      ? { method: 'POST', path: `/api/v1/groups/${groupId}/memberships/_bulk`, headers: json(key), body: JSON.stringify(body) }
      : gql(key, 'addGroupMemberships', { groupRef: { id: groupId }, input: body });
    return expectOk(url, req, `bulk (${arm})`);
  });
  return done('bulk', 'POST /groups/{id}/memberships/_bulk (1,000)', t);
}

/** Reorder of the 10,000 memberships of the big group: every run reverses the order, so every row moves. */
export async function timeReorder(url: string, key: string, s: Seeded, reps: number, dbUrl: string): Promise<Timed> {
  let ids = await currentOrder(dbUrl, s.bigGroupId);
  const t = await alternate(reps, async (arm) => {
    ids = [...ids].reverse();
    const body = orderBody(ids);
    const req: HttpRequest = arm === 'rest'
      ? { method: 'PATCH', path: `/api/v1/groups/${s.bigGroupId}/memberships/order`, headers: json(key), body: JSON.stringify(body) }
      : gql(key, 'updateGroupMembershipsOrder', { groupRef: { id: s.bigGroupId }, input: body });
    return expectOk(url, req, `reorder (${arm})`);
  });
  return done('reorder', 'PATCH /groups/{10k group}/memberships/order (10,000)', t);
}

export async function currentOrder(dbUrl: string, groupId: string): Promise<string[]> {
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string }>('select id from group_memberships where group_id = $1 order by order_number, id', [groupId]);
    return rows.map((r) => r.id);
  } finally {
    await db.end();
  }
}
