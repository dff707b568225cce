import { Worker } from 'node:worker_threads';

/**
 * The noisy-neighbour scenario, shared by `npm run bench` (which reports B's latency) and
 * test/hardening/neighbour.test.ts (which asserts B is always served): key A of community A
 * sends the most expensive documents and requests the limits allow, at `concurrency`, while
 * key B of community B reads one group by id, two at a time.
 */
export interface Neighbours {
  url: string;
  keyA: string;
  keyB: string;
  groupA: string;
  groupB: string;
}

export interface NeighbourRun {
  /** B's answers: status (0: no answer) and latency in ms. */
  b: { status: number; ms: number }[];
  /** A's answers by status (0: no answer). */
  a: Record<number, number>;
}

async function call(url: string, init: RequestInit & { key?: string; token?: string }): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key) headers['x-api-key'] = init.key;
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body };
}

async function tenant(url: string, adminToken: string, name: string): Promise<string> {
  const op = async (query: string, variables: object) => {
    const { body } = await call(`${url}/graphql`, { method: 'POST', token: adminToken, body: JSON.stringify({ query, variables }) });
    if (body.errors) throw new Error(`neighbour setup: ${JSON.stringify(body.errors)}`);
    return body.data;
  };
  const c = await op('mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', { i: { name } });
  const k = await op('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', {
    i: { communityId: c.createCommunity.id, rateLimitPerHour: 1_000_000_000 },
  });
  return k.createApiKey.key;
}

/** Two communities; A gets 100 groups and 300 members, 100 of them in its first group. */
export async function prepareNeighbours(url: string, adminToken: string): Promise<Neighbours> {
  const keyA = await tenant(url, adminToken, 'neighbour A');
  const keyB = await tenant(url, adminToken, 'neighbour B');
  const stamp = Date.now().toString(36);
  const groups = await call(`${url}/api/v1/triggers/groups/import`, {
    method: 'POST',
    key: keyA,
    body: JSON.stringify({ groups: Array.from({ length: 100 }, (_, i) => ({ externalId: `nA-${stamp}-${i}`, name: `A ${i}` })) }),
  });
  if (groups.status !== 202) throw new Error(`neighbour setup: groups import ${groups.status}`);
  const group = await call(`${url}/api/v1/groups`, { method: 'POST', key: keyA, body: JSON.stringify({ name: 'A main' }) });
  const members = await call(`${url}/api/v1/members/_bulk`, {
    method: 'POST',
    key: keyA,
    body: JSON.stringify({ members: Array.from({ length: 300 }, (_, i) => ({ firstName: 'A', lastName: `${i}` })) }),
  });
  if (members.status !== 201) throw new Error(`neighbour setup: members ${members.status}`);
  const bulk = await call(`${url}/api/v1/groups/${group.body.id}/memberships/_bulk`, {
    method: 'POST',
    key: keyA,
    body: JSON.stringify({ groupMemberships: members.body.slice(0, 100).map((m: { id: string }) => ({ memberId: m.id })) }),
  });
  if (bulk.status !== 201) throw new Error(`neighbour setup: memberships ${bulk.status}`);
  const b = await call(`${url}/api/v1/groups`, { method: 'POST', key: keyB, body: JSON.stringify({ name: 'B' }) });
  return { url, keyA, keyB, groupA: group.body.id, groupB: b.body.id };
}

const alias = (n: number, field: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

/** A's requests, in rotation: each is among the most expensive the limits let through. */
function attacks(n: Neighbours): (() => Promise<number>)[] {
  // Only A's status is kept: its answers are read as bytes, never decoded or parsed, so the
  // bench spends as little of the shared CPU on them as a client can.
  const send = (path: string, init: RequestInit) =>
    fetch(`${n.url}${path}`, { ...init, headers: { 'content-type': 'application/json', 'x-api-key': n.keyA } }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
  const gql = (query: string) => () => send('/graphql', { method: 'POST', body: JSON.stringify({ query }) });
  const get = (path: string) => () => send(path, { method: 'GET' });
  let seq = 0;
  return [
    // As many root fields as allowed (10, each an alias), each a full page of groups with their memberships.
    gql(alias(10, 'groups(limit: 100) { results { id name memberships(limit: 20) { results { id orderNumber } } } }')),
    gql(alias(10, 'members(limit: 100) { results { id firstName lastName emailAddress } }')),
    gql(alias(10, `groupMemberships(groupRef: { id: "${n.groupA}" }, limit: 100) { results { id member { id firstName } } }`)),
    // Over the alias limit on purpose: refused with 400 before any work.
    gql(alias(1000, 'groups { size }')),
    get('/api/v1/groups?limit=100'),
    get('/api/v1/members?limit=100'),
    get(`/api/v1/groups/${n.groupA}/memberships?limit=100`),
    () =>
      send('/api/v1/members/_bulk', {
        method: 'POST',
        body: JSON.stringify({ members: Array.from({ length: 100 }, (_, i) => ({ firstName: 'N', lastName: `${++seq}-${i}` })) }),
      }),
  ];
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

export function latency(run: NeighbourRun): { n: number; p50: number; p99: number; max: number } {
  const ms = run.b.filter((r) => r.status === 200).map((r) => r.ms).sort((x, y) => x - y);
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? NaN };
}

/**
 * B's reader, run in a worker thread of its own: the main thread sends A's attack and parses
 * its answers (tens of thousands of rows each), and B timed on that same event loop would
 * count the bench's own parsing as the service's latency.
 */
const B_READER = `
const { parentPort, workerData: w } = require('node:worker_threads');
const until = Date.now() + w.seconds * 1000;
const b = [];
const reader = async () => {
  while (Date.now() < until) {
    const started = performance.now();
    const status = await fetch(w.url, { headers: { 'x-api-key': w.key } })
      .then(async (r) => { await r.text(); return r.status; })
      .catch(() => 0);
    b.push({ status, ms: performance.now() - started });
  }
};
Promise.all([reader(), reader()]).then(() => parentPort.postMessage(b));
`;

function readB(n: Neighbours, seconds: number): Promise<NeighbourRun['b']> {
  const worker = new Worker(B_READER, { eval: true, workerData: { url: `${n.url}/api/v1/groups/${n.groupB}`, key: n.keyB, seconds } });
  return new Promise((resolve, reject) => {
    worker.once('message', (b: NeighbourRun['b']) => {
      resolve(b);
      void worker.terminate();
    });
    worker.once('error', reject);
    // Without its message (it could not start, or ended early), B's run has no answers to give.
    worker.once('exit', (code) => reject(new Error(`bench/neighbour.ts: B's reader ended (exit code ${code}) before it reported`)));
  });
}

/** B reads for `seconds` (two at a time, from a worker thread); with `concurrency` > 0, A attacks meanwhile. */
export async function runNeighbours(n: Neighbours, seconds: number, concurrency: number): Promise<NeighbourRun> {
  const until = Date.now() + seconds * 1000;
  const run: NeighbourRun = { b: [], a: {} };
  const list = attacks(n);
  let next = 0;
  const a = Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      const attack = list[next++ % list.length];
      const status = await attack().catch(() => 0);
      run.a[status] = (run.a[status] ?? 0) + 1;
    }
  });
  const [b] = await Promise.all([readB(n, seconds), ...a]);
  run.b = b;
  return run;
}
