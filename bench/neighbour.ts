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
  const gql = (query: string) => () =>
    call(`${n.url}/graphql`, { method: 'POST', key: n.keyA, body: JSON.stringify({ query }) }).then((r) => r.status);
  const get = (path: string) => () => call(`${n.url}${path}`, { method: 'GET', key: n.keyA }).then((r) => r.status);
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
      call(`${n.url}/api/v1/members/_bulk`, {
        method: 'POST',
        key: n.keyA,
        body: JSON.stringify({ members: Array.from({ length: 100 }, (_, i) => ({ firstName: 'N', lastName: `${++seq}-${i}` })) }),
      }).then((r) => r.status),
  ];
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

export function latency(run: NeighbourRun): { n: number; p50: number; p99: number; max: number } {
  const ms = run.b.filter((r) => r.status === 200).map((r) => r.ms).sort((x, y) => x - y);
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? NaN };
}

/** B reads for `seconds` (two at a time); with `concurrency` > 0, A attacks meanwhile. */
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
  const b = Array.from({ length: 2 }, async () => {
    while (Date.now() < until) {
      const started = performance.now();
      const status = await call(`${n.url}/api/v1/groups/${n.groupB}`, { method: 'GET', key: n.keyB })
        .then((r) => r.status)
        .catch(() => 0);
      run.b.push({ status, ms: performance.now() - started });
    }
  });
  await Promise.all([...a, ...b]);
  return run;
}
