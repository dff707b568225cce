import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { SERVICE_ROLE } from '../src/db/tenancy';
import { listen, startRuntime } from '../src/runtime';
import { median } from './load';
import { preparedText } from './prepared-text';
import { SEARCH_COMMUNITY, seedSearch } from './search';
import { SIZES } from './seed';

/**
 * The scale section of the bench (docs/performance.md, "Cost does not grow with the data"):
 * a second data set ten times the main one (SIZES; a hundred times its members: the search
 * section's million, in its community, seeded once by whichever of the two sections runs first), and the same
 * requests asked of both, one at a time, small and large alternated request by request.
 * Beside the wall times, each request's statements as the service runs them (captured in
 * process, parameters included) get an EXPLAIN (ANALYZE, BUFFERS) on both data sets, as the
 * service role under the community's row-level security: the buffers a statement touches do
 * not drift with the machine's load.
 */

export const LARGE_COMMUNITY = SEARCH_COMMUNITY;
export const LARGE_SIZES = { groups: SIZES.groups * 10, members: SIZES.members * 100, memberships: SIZES.memberships * 10, bigGroup: SIZES.bigGroup * 10 };
/** The deep page asked of both: the main community has exactly this many members, so its page is empty, the large one's full. */
export const DEEP_SKIP = 10_000;

/** Deterministic ids: member i of the search seed is md5('m' || i)::uuid (bench/search.ts). */
const groupId = (n: number) => `md5('scale-g' || ${n})::uuid`;

/**
 * Groups and memberships of the large community, shaped like the main seed (bench/seed.ts)
 * times ten: group 1 holds the first 100,000 members (order 1..100,000), the other 400,000
 * memberships are spread over groups 2..10,000 (about 40 each). Event capture and the count
 * triggers are off meanwhile (as the search seed does for members): each group is written once,
 * with its count (group n >= 2 holds the i < 400,000 with i % 9,999 = n - 2), and checked after.
 */
function scaleSql(): string {
  const { groups, memberships, bigGroup, members } = LARGE_SIZES;
  const rest = memberships - bigGroup;
  return `
  alter table groups disable trigger user;
  alter table group_memberships disable trigger user;
  insert into groups (id, community_id, external_id, name, about, color, membership_count, is_visible_in_app, created_at, modified_at)
  select md5('scale-g' || n)::uuid, '${LARGE_COMMUNITY}', 'g' || lpad(n::text, 5, '0'), 'Group ' || n, 'About group ' || n || ': ' || repeat('lorem ipsum ', 8),
         '#' || lpad(to_hex((n::bigint * 2654435) % 16777216), 6, '0'),
         case when n = 1 then ${bigGroup} else (${rest} - 1 - (n - 2)) / (${groups} - 1) + 1 end, n % 7 <> 0,
         now() - make_interval(secs => (${groups} - n) * 60), now() - make_interval(secs => (${groups} - n) * 30)
    from generate_series(1, ${groups}) n;
  insert into group_memberships (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
  select gen_random_uuid(), '${LARGE_COMMUNITY}', ${groupId(1)}, md5('m' || i)::uuid, 'gm' || i, 'Title ' || i,
         case when i <= 5 then 'ADMIN' else 'MEMBER' end, i,
         now() - make_interval(secs => ${bigGroup * 2} - i), now() - make_interval(secs => ${bigGroup * 2} - i)
    from generate_series(1, ${bigGroup}) i;
  insert into group_memberships (id, community_id, group_id, member_id, external_id, title, role, order_number, created_at, modified_at)
  select gen_random_uuid(), '${LARGE_COMMUNITY}', md5('scale-g' || (2 + i % (${groups} - 1)))::uuid, md5('m' || (1 + i % ${members}))::uuid, 'gm' || i, null, 'MEMBER',
         i / (${groups} - 1) + 1, now() - make_interval(secs => ${rest} - i), now() - make_interval(secs => ${rest} - i)
    from generate_series(0, ${rest} - 1) i;
  alter table groups enable trigger user;
  alter table group_memberships enable trigger user;`;
}

export interface LargeSeeded {
  communityId: string;
  bigGroupId: string;
  groupId: string;
  /** Seconds: the members (when this section seeded them) and the groups and memberships. */
  membersSeconds: number;
  seconds: number;
}

/** Seeds the large data set; the members only when the search section has not (`membersSeconds` 0 then). */
export async function seedScale(url: string): Promise<LargeSeeded> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: [m] } = await client.query<{ n: boolean }>('select exists (select 1 from members where community_id = $1) as n', [LARGE_COMMUNITY]);
    const membersSeconds = m.n ? 0 : await seedSearch(url, LARGE_SIZES.members);
    const started = Date.now();
    // Where the bench may (a superuser: the embedded server), the foreign-key checks are skipped
    // too: a million probes of the members' primary key for rows built consistent by construction.
    const replica = await client.query('set session_replication_role = replica').then(() => true, () => false);
    await client.query(scaleSql());
    if (replica) await client.query('reset session_replication_role');
    for (const table of ['groups', 'group_memberships']) await client.query(`vacuum analyze ${table}`);
    const { rows: [c] } = await client.query<{ n: string }>('select count(*) as n from group_memberships where community_id = $1', [LARGE_COMMUNITY]);
    if (Number(c.n) !== LARGE_SIZES.memberships) throw new Error(`bench scale: ${c.n} memberships, expected ${LARGE_SIZES.memberships}`);
    const { rows: [wrong] } = await client.query<{ n: string }>(
      `select count(*) as n from groups g where g.community_id = $1
          and g.membership_count <> (select count(*) from group_memberships m where m.community_id = g.community_id and m.group_id = g.id)`,
      [LARGE_COMMUNITY],
    );
    if (Number(wrong.n) !== 0) throw new Error(`bench scale: ${wrong.n} groups with a wrong membershipCount`);
    const ids = await client.query<{ big: string; one: string }>(`select ${groupId(1)} as big, ${groupId(5000)} as one`);
    return { communityId: LARGE_COMMUNITY, bigGroupId: ids.rows[0].big, groupId: ids.rows[0].one, membersSeconds, seconds: (Date.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

export interface ScaleCase {
  id: string;
  label: string;
  /** Goal: large / small p50 at most this. */
  limit: number;
  path: (s: { bigGroupId: string; groupId: string }) => string;
  /** A create instead of a GET: the JSON body of one request (each one new: its identities are unique). */
  post?: () => unknown;
}

/** Distinct identities for every create of a run, across both data sets and the explainer. */
let creates = 0;
const uniqueTag = () => `${process.pid}-${Date.now().toString(36)}-${++creates}`;

export const SCALE_CASES: ScaleCase[] = [
  { id: 'groups', label: 'first page of groups (GET /groups)', limit: 1.2, path: () => '/api/v1/groups' },
  { id: 'members', label: 'first page of members (GET /members)', limit: 1.2, path: () => '/api/v1/members' },
  { id: 'memberships', label: "first page of the biggest group's memberships (GET /groups/{id}/memberships)", limit: 1.2, path: (s) => `/api/v1/groups/${s.bigGroupId}/memberships` },
  { id: 'group', label: 'one group (GET /groups/{id})', limit: 1.2, path: (s) => `/api/v1/groups/${s.groupId}` },
  { id: 'deepSkip', label: `members at skip=${DEEP_SKIP.toLocaleString('en')} (GET /members?skip=${DEEP_SKIP})`, limit: 2, path: () => `/api/v1/members?skip=${DEEP_SKIP}` },
  // Its 409 check looks up the externalId and the address among the community's members
  // (Migration20261128220000: under row-level security the address once read all of them).
  {
    id: 'createMember',
    label: 'one member created (POST /members)',
    limit: 1.2,
    path: () => '/api/v1/members',
    post: () => {
      const tag = uniqueTag();
      return { externalId: `scale-${tag}`, firstName: 'Scale', emailAddress: `scale-${tag}@example.org` };
    },
  },
];

/** The request of a case: a GET, or a POST with a new body. */
const requestOf = (c: ScaleCase, key: string): RequestInit =>
  c.post
    ? { method: 'POST', headers: { 'X-API-Key': key, 'content-type': 'application/json' }, body: JSON.stringify(c.post()) }
    : { headers: { 'X-API-Key': key } };

export interface ScaleStatement {
  sql: string;
  /** EXPLAIN (ANALYZE, BUFFERS) on each data set: shared buffers touched (hit + read), execution ms, the plan. */
  small: { buffers: number; ms: number; plan: string };
  large: { buffers: number; ms: number; plan: string };
}

export interface ScaleResult {
  id: string;
  label: string;
  limit: number;
  small: { path: string; p50: number; p95: number; size: number };
  large: { path: string; p50: number; p95: number; size: number };
  /** large p50 / small p50. */
  ratio: number;
  /** The median over rounds of large / small (each round's two requests ran back to back). */
  paired: number;
  statements: ScaleStatement[];
}

export interface ScaleReport {
  small: { groups: number; members: number; memberships: number; bigGroup: number };
  large: typeof LARGE_SIZES;
  seedSeconds: number;
  membersSeedSeconds: number;
  reps: number;
  results: ScaleResult[];
}

export interface ScaleTarget {
  url: string;
  key: string;
  bigGroupId: string;
  groupId: string;
  communityId: string;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * `reps` rounds after 20 unmeasured ones; each round asks every case of both data sets, one
 * request at a time, small and large back to back (which goes first alternates per round).
 */
export async function timeScale(
  small: ScaleTarget,
  large: ScaleTarget,
  reps: number,
  explain: (c: ScaleCase, target: ScaleTarget) => Promise<{ sql: string; buffers: number; ms: number; plan: string }[]>,
): Promise<Omit<ScaleReport, 'seedSeconds' | 'membersSeedSeconds'>> {
  const get = async (t: ScaleTarget, c: ScaleCase) => {
    const path = c.path(t);
    const t0 = performance.now();
    const res = await fetch(`${t.url}${path}`, requestOf(c, t.key));
    const body = (await res.json()) as { size?: number };
    const ms = performance.now() - t0;
    if (res.status !== (c.post ? 201 : 200)) throw new Error(`bench scale ${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return { ms, size: body.size ?? 1 };
  };
  const times = SCALE_CASES.map(() => ({ small: [] as number[], large: [] as number[], sizes: { small: 0, large: 0 } }));
  for (let r = -20; r < reps; r++) {
    for (const [k, c] of SCALE_CASES.entries()) {
      const pair = r % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
      for (const which of pair) {
        const t = which === 'small' ? small : large;
        const { ms, size } = await get(t, c);
        if (r < 0) continue; // unmeasured warm-up rounds
        times[k][which].push(ms);
        times[k].sizes[which] = size;
      }
    }
  }
  const results: ScaleResult[] = [];
  for (const [k, c] of SCALE_CASES.entries()) {
    const t = times[k];
    const paired = median(t.large.map((x, i) => x / t.small[i]));
    const s = [...t.small].sort((a, b) => a - b);
    const l = [...t.large].sort((a, b) => a - b);
    const smallPlans = await explain(c, small);
    const largePlans = await explain(c, large);
    results.push({
      id: c.id,
      label: c.label,
      limit: c.limit,
      small: { path: c.path(small), p50: quantile(s, 0.5), p95: quantile(s, 0.95), size: t.sizes.small },
      large: { path: c.path(large), p50: quantile(l, 0.5), p95: quantile(l, 0.95), size: t.sizes.large },
      ratio: quantile(l, 0.5) / quantile(s, 0.5),
      paired,
      statements: largePlans.map((p, i) => ({
        sql: p.sql,
        small: { buffers: smallPlans[i]?.buffers ?? NaN, ms: smallPlans[i]?.ms ?? NaN, plan: smallPlans[i]?.plan ?? '' },
        large: { buffers: p.buffers, ms: p.ms, plan: p.plan },
      })),
    });
  }
  return {
    small: { groups: SIZES.groups, members: SIZES.members, memberships: SIZES.memberships, bigGroup: SIZES.bigGroup },
    large: LARGE_SIZES,
    reps,
    results,
  };
}

/**
 * The statements a request runs, captured from an in-process service (MikroORM's knex `query`
 * events, as test/helpers/sql-count.ts counts them, with their parameters), each explained as
 * the service runs it: in a transaction as the service role with the caller's community set,
 * PREPAREd and EXECUTEd five times first (PostgreSQL's plan cache may then switch to a generic
 * plan, as on the service's pooled connections), then EXPLAIN (ANALYZE, BUFFERS) EXECUTE.
 */
export async function startExplainer(url: string, adminToken: string) {
  const runtime = await startRuntime(loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: adminToken }), url, { migrate: false });
  const server = await listen(runtime.app, 0);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const knex = (runtime.orm.em.getConnection() as unknown as { getKnex(): NodeJS.EventEmitter }).getKnex();
  const captured: { sql: string; bindings: unknown[] }[] = [];
  const onQuery = (q: { sql?: string; bindings?: unknown[] }) => captured.push({ sql: q.sql ?? '', bindings: q.bindings ?? [] });
  const db = new Client({ connectionString: url });
  await db.connect();
  let n = 0;
  const explainOne = async (sql: string, bindings: unknown[], communityId: string) => {
    const { text, prepare, execute } = preparedText(`scale_${++n}`, sql, bindings, (x) => db.escapeLiteral(x));
    await db.query('begin');
    try {
      await db.query(`set local role ${SERVICE_ROLE}`);
      await db.query(`select set_config('app.community_id', $1, true)`, [communityId]);
      await db.query(prepare);
      for (let i = 0; i < 5; i++) await db.query(execute);
      const res = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off, timing off) ${execute}`);
      const plan = res.rows.map((r) => r['QUERY PLAN']).join('\n');
      const first = /Buffers: shared((?: \w+=\d+)+)/.exec(plan)?.[1] ?? '';
      const buffers = [...first.matchAll(/(hit|read)=(\d+)/g)].reduce((a, m) => a + Number(m[2]), 0);
      const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
      return { sql: text.replace(/\s+/g, ' ').trim(), buffers, ms, plan };
    } finally {
      await db.query('rollback');
    }
  };
  return {
    url: base,
    async explain(c: ScaleCase, target: ScaleTarget) {
      const call = () => fetch(base + c.path(target), requestOf(c, target.key)).then((r) => r.text());
      await call(); // warm key cache: what is captured next is the request's own work
      captured.length = 0;
      knex.on('query', onQuery);
      try {
        await call();
      } finally {
        knex.off('query', onQuery);
      }
      const out = [];
      for (const q of captured.filter((c) => /^\s*(select|with)\b/i.test(c.sql))) out.push(await explainOne(q.sql, q.bindings, target.communityId));
      return out;
    },
    async close() {
      await db.end();
      server.close();
      await runtime.close();
    },
  };
}
