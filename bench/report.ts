import { renderObservability, type ObservabilityReport } from './observability';
import { ARMS, OWN_ARMS, PEER_ARMS, pairedRatio, VARIANT_ARMS, type Arm, type OpResult } from './measure';
import type { ReplicaBench } from './replicas';
import type { ScaleReport } from './scale';
import { median } from './load';
import type { SafetyCost } from './safety';
import type { Timed } from './singles';
import type { EventsBench } from './events';
import type { SqlReport } from './sql';
import { goals, type Goal } from './goals';

export interface Meta {
  date: string;
  commit: string;
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  /** The Node.js each arm ran on (absent in results saved before it was recorded). */
  nodes?: Partial<Record<Arm, string>>;
  database: string;
  loadStart: number[];
  loadEnd: number[];
  settings: Record<string, number | string>;
  notes: string[];
  minutes: number;
}

export interface BenchResults {
  meta: Meta;
  load: OpResult[];
  sql: SqlReport;
  /** Statements the raw server sends per op (by construction, see raw-server.ts). */
  rawSql: Record<string, number>;
  memory: {
    /** liveHeapMb: heapUsed after a full GC at the end of the load phase (bench/inspector.ts); absent in older results. */
    service: { peakMb: number; rssMb: number; liveHeapMb?: number; bootPeakMb?: number };
    raw: { peakMb: number; rssMb: number };
    serviceAfterSingles?: { peakMb: number };
    postgraphile4?: { peakMb: number; rssMb: number };
    postgraphile5?: { peakMb: number; rssMb: number };
    uncapped?: { peakMb: number; rssMb: number; liveHeapMb?: number };
    redis?: { peakMb: number; rssMb: number };
    nojit?: { peakMb: number; rssMb: number };
    norls?: { peakMb: number; rssMb: number };
    plain?: { peakMb: number; rssMb: number };
  };
  singles: Timed[];
  /** Absent in results saved before it was measured. */
  safety?: SafetyCost[];
  /** bench/neighbour.ts: B's reads quiet and while A attacks. */
  neighbour?: NeighbourReport;
  events?: EventsBench;
  observability?: ObservabilityReport;
  /** bench/replicas.ts: the groups page with a replica against the primary alone. */
  replicas?: ReplicaBench;
  /** bench/scale.ts: the same requests on the main data set and one ten times larger. */
  scale?: ScaleReport;
}

export interface NeighbourReport {
  seconds: number;
  concurrency: number;
  quiet: { n: number; p50: number; p99: number; max: number; statuses: Record<number, number> };
  attacked: { n: number; p50: number; p99: number; max: number; statuses: Record<number, number> };
  a: Record<number, number>;
}

const n0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en') : 'n/a');
const n2 = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a');
const sqlOf = (c: SqlReport['rest'][string] | undefined) => (c ? `${c.all} (${c.orm} + ${c.pool})` : 'n/a');

function table(head: string[], rows: string[][]): string[] {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

export function renderResults(r: BenchResults): string {
  const m = r.meta;
  const s = m.settings;
  const out: string[] = [
    '# Benchmark results (`npm run bench`)',
    '',
    'Written by `bench/run.ts`; do not edit by hand. How to read it and what moves the numbers: `docs/performance.md`.',
    '',
    `- Date: ${m.date}; commit \`${m.commit}\`; ${n2(m.minutes, 1)} minutes end to end`,
    `- Machine: ${m.cpu}, ${m.cores} cores, ${n2(m.memoryGb, 1)} GB memory; bench process on Node ${m.node}; ${m.database}`,
    `- Node.js per arm: ${m.nodes ? ARMS.filter((a) => m.nodes![a]).map((a) => `${a} ${m.nodes![a]}`).join(', ') : `all ${m.node}`}`,
    `- Load average (1/5/15 min) at start ${m.loadStart.map((x) => x.toFixed(2)).join('/')}, at end ${m.loadEnd.map((x) => x.toFixed(2)).join('/')}` +
      ' (the load generator, PostgreSQL and the servers share these cores; other load skews absolute numbers, less so the ratios, which come from interleaved arms)',
    `- Load: autocannon, ${s.connections} connections, ${s.rounds} rounds x ${s.seconds} s per arm (arms interleaved, order rotated per round), medians; ` +
      `latency at half of each arm's saturated rate for ${s.latencySeconds} s; timed operations: median of ${s.opReps} runs per arm after a warm-up`,
    '- Arms: **REST** = the service\'s `/api/v1` route; **GraphQL** = the route\'s own document POSTed to `/graphql` with the variables the facade binds; ' +
      '**raw** = `bench/raw-server.ts`, node:http + pg running the same statements (prepared) and answering the same JSON; ' +
      '**postgraphile4** / **postgraphile5** = PostGraphile over the same database and tables (`bench/postgraphile-server.ts`), answering the same page of groups.',
    '',
    '## Goals',
    '',
    ...table(['Goal', 'Measured', 'Target', 'Status'], goals(r).map((g: Goal) => [g.goal, g.measured, g.target, g.status])),
    '',
    '## Throughput (2xx responses per second, median)',
    '',
    'Ratios are the median of the per-round ratios (the arms of a round ran back to back).',
    '',
    ...table(
      ['Operation', 'REST', 'GraphQL', 'raw', 'REST / raw', 'REST / GraphQL'],
      r.load.map((l) => [
        l.op.label, n0(l.arms.rest.rpsMedian), n0(l.arms.graphql.rpsMedian), n0(l.arms.raw.rpsMedian),
        ratio(pairedRatio(l, 'rest', 'raw'), 1), ratio(pairedRatio(l, 'rest', 'graphql'), 1),
      ]),
    ),
    '',
    ...peerSection(r),
    ...renderObservability(r.observability),
    '## Server CPU and SQL per request',
    '',
    'CPU: utime + stime of the server process (all threads) over an arm, per 2xx response, median (ms). PG CPU: the same for the embedded PostgreSQL server (postmaster and backends; n/a on DATABASE_URL). ' +
      'SQL: statements per request, counted in process with test/helpers/sql-count.ts on a warm key cache: all (MikroORM + gate pool).',
    '',
    ...table(
      ['Operation', 'CPU REST', 'CPU GraphQL', 'CPU raw', 'PG CPU REST / GraphQL / raw', 'SQL REST', 'SQL GraphQL', 'SQL raw'],
      r.load.map(({ op, arms }) => [
        op.label, n2(arms.rest.cpuMsMedian), n2(arms.graphql.cpuMsMedian), n2(arms.raw.cpuMsMedian),
        OWN_ARMS.map((a) => n2(arms[a].dbCpuMsMedian)).join(' / '),
        sqlOf(r.sql.rest[op.id]), sqlOf(r.sql.graphql[op.id]), String(r.rawSql[op.id] ?? 'n/a'),
      ]),
    ),
    '',
    ...Object.entries(r.sql.rest)
      .filter(([id]) => !r.load.some((l) => l.op.id === id))
      .map(([id, c]) => `- SQL of ${id}: ${sqlOf(c)}`),
    '',
    '## Latency at half of saturation (ms)',
    '',
    'Open loop at half of the arm\'s median saturated rate. "client late": the bench process sent its requests more than 10 ms behind the pace (p99), so it, not the server, limited that run.',
    '',
    ...table(
      ['Operation', ...OWN_ARMS.map((a) => `${a} rate/s`), ...OWN_ARMS.map((a) => `${a} p50 / p99`)],
      r.load.map(({ op, arms }) => [
        op.label,
        ...OWN_ARMS.map((a) => n0(arms[a].halfRate?.rate ?? NaN)),
        ...OWN_ARMS.map((a) => `${arms[a].halfRate?.p50 ?? 'n/a'} / ${arms[a].halfRate?.p99 ?? 'n/a'}${(arms[a].halfRate?.lateMs ?? 0) > 10 ? ' (client late)' : ''}`),
      ]),
    ),
    '',
    '## Timed operations (ms, client wall time)',
    '',
    ...table(
      ['Operation', 'REST median', 'REST runs', 'GraphQL median', 'GraphQL runs', 'Note'],
      r.singles.map((t) => [
        t.label, n0(t.restMedian), t.rest.map(n0).join(', '), n0(t.graphqlMedian), t.graphql.map(n0).join(', ') || '-', t.note ?? '',
      ]),
    ),
    '',
    '## Safe retries and conditional requests (ms, median of alternated single requests)',
    '',
    ...table(
      ['Request', 'With', 'ms', 'Without', 'ms', 'Ratio'],
      (r.safety ?? []).map((c) => [c.label, c.withLabel, c.withMedian.toFixed(2), c.withoutLabel, c.withoutMedian.toFixed(2), `${c.ratio.toFixed(2)}x`]),
    ),
    '',
    ...eventsSection(r.events),
    ...replicasSection(r.replicas),
    ...scaleSection(r.scale),
    '## Memory',
    '',
    `- Service peak RSS (VmHWM) after the load phase at ${s.connections} connections: ${n0(r.memory.service.peakMb)} MB (RSS then ${n0(r.memory.service.rssMb)} MB); ` +
      `raw server: ${n0(r.memory.raw.peakMb)} MB` +
      [...PEER_ARMS, ...VARIANT_ARMS].filter((a) => r.memory[a]).map((a) => `; ${a}: ${n0(r.memory[a]!.peakMb)} MB`).join('') + '.' +
      (r.memory.serviceAfterSingles ? ` After the timed operations (bulk, reorder, import): ${n0(r.memory.serviceAfterSingles.peakMb)} MB.` : ''),
    ...(r.memory.service.bootPeakMb !== undefined ? [`- Service peak RSS after start, before any load: ${n0(r.memory.service.bootPeakMb)} MB.`] : []),
    ...(r.memory.service.liveHeapMb !== undefined
      ? [
          `- Live heap (\`heapUsed\` after a full GC, through the inspector, at the end of the load phase): service ${n2(r.memory.service.liveHeapMb, 1)} MB` +
            (r.memory.uncapped?.liveHeapMb !== undefined ? `; uncapped: ${n2(r.memory.uncapped.liveHeapMb, 1)} MB` : '') + '.',
        ]
      : []),
    '',
    ...(r.neighbour ? neighbourSection(r.neighbour) : []),
    '## Notes',
    '',
    ...(m.notes.length ? m.notes.map((x) => `- ${x}`) : ['- none']),
    '',
    '## Short of a goal',
    '',
    ...shortList(r),
    '',
  ];
  return out.join('\n');
}

/** The ops the PostGraphile peers answered, every arm side by side. */
function peerSection(r: BenchResults): string[] {
  const withPeers = r.load.filter((l) => l.op.peer && [...PEER_ARMS, ...VARIANT_ARMS].some((a) => l.arms[a].rps.length));
  if (!withPeers.length) return [];
  const node = (a: Arm) => r.meta.nodes?.[a] ?? r.meta.node;
  const rows: string[][] = [];
  for (const l of withPeers) {
    for (const a of [...OWN_ARMS, ...PEER_ARMS, ...VARIANT_ARMS]) {
      const x = l.arms[a];
      if (!x.rps.length) continue;
      rows.push([
        l.op.label, a, node(a), n0(x.rpsMedian), n2(x.cpuMsMedian), n2(x.dbCpuMsMedian), n2(x.p99Median, 1),
        x.halfRate ? `${x.halfRate.p50} / ${x.halfRate.p99}` : 'n/a',
      ]);
    }
  }
  const ratios: string[][] = [];
  for (const l of withPeers) {
    const pairs: [Arm, Arm][] = [['rest', 'postgraphile5'], ['rest', 'postgraphile4'], ['graphql', 'postgraphile5'], ['graphql', 'postgraphile4'], ['postgraphile5', 'raw'], ['postgraphile4', 'raw'], ['rest', 'raw'], ['rest', 'uncapped'], ['redis', 'rest'], ['rest', 'nojit'], ['rest', 'norls'], ['rest', 'plain']];
    for (const [a, b] of pairs) {
      if (!l.arms[a].rps.length || !l.arms[b].rps.length) continue;
      ratios.push([l.op.label, `${a} / ${b}`, ratio(pairedRatio(l, a, b), 1), ratio(l.arms[a].cpuMsMedian, l.arms[b].cpuMsMedian)]);
    }
  }
  return [
    '## Against PostGraphile',
    '',
    'The same page from every arm, measured interleaved with the others (the peers take their turn in the same rounds). ' +
      '`uncapped`, `redis` and `nojit` are the REST route of second service processes without the heap flags, with REDIS_URL (rate limits in Redis), and with GRAPHQL_JIT=false (graphql-js execute instead of graphql-jit). ' +
      'p99 loaded: autocannon\'s p99 at saturation, median over the rounds. The peers do no authentication and no rate limiting; the service and raw do both.',
    '',
    ...table(['Operation', 'Arm', 'Node', 'req/s', 'CPU ms/req', 'PG CPU ms/req', 'p99 loaded (ms)', 'half rate p50 / p99 (ms)'], rows),
    '',
    ...table(['Operation', 'Ratio', 'Throughput (paired)', 'CPU per request'], ratios),
    '',
  ];
}

function shortList(r: BenchResults): string[] {
  const short = goals(r).filter((g) => g.status !== 'pass');
  if (!short.length) return ['Nothing: every goal passed in this run.'];
  return [
    ...short.map((g) => `- ${g.goal}: ${g.measured} (target ${g.target}) - ${g.status}`),
    '',
    'Profile evidence and what would close each gap: docs/performance.md.',
  ];
}

/** `node -r @swc-node/register bench/report.ts [results.json]`: renders a saved run again. */
if (require.main === module) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs = require('node:fs') as typeof import('node:fs');
  console.log(renderResults(JSON.parse(fs.readFileSync(process.argv[2] ?? '.data/bench/results.json', 'utf8'))));
}

function neighbourSection(nb: NeighbourReport): string[] {
  const statuses = (x: Record<number, number>) => Object.entries(x).map(([k, v]) => `${k}: ${v}`).join(', ');
  return [
    '## Noisy neighbour (ms, client wall time)',
    '',
    `Key B of community B reads \`GET /api/v1/groups/{id}\` two at a time for ${nb.seconds} s (timed in a worker thread of its own), first alone, then while key A of community A sends ` +
      `the most expensive documents and requests the limits allow at concurrency ${nb.concurrency} (\`bench/neighbour.ts\`).`,
    '',
    ...table(
      ['B', 'requests answered 200', 'p50', 'p99', 'max', 'statuses'],
      [
        ['quiet', n0(nb.quiet.n), n2(nb.quiet.p50, 1), n2(nb.quiet.p99, 1), n2(nb.quiet.max, 1), statuses(nb.quiet.statuses)],
        ['A attacking', n0(nb.attacked.n), n2(nb.attacked.p50, 1), n2(nb.attacked.p99, 1), n2(nb.attacked.max, 1), statuses(nb.attacked.statuses)],
      ],
    ),
    '',
    `A's answers by status: ${statuses(nb.a)}.`,
    '',
  ];
}

/** The outbox's cost (paired runs with its triggers on and off) and the webhook delivery rate. */
function eventsSection(e: EventsBench | undefined): string[] {
  if (!e) return [];
  const pct = (on: number, off: number) => (Number.isFinite(on / off) ? `${((on / off - 1) * 100).toFixed(1)}%` : 'n/a');
  const paired = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
  const db = e.inDatabase;
  return [
    '## Events: outbox cost and webhook delivery (docs/events.md)',
    '',
    e.interleaved
      ? 'Two services, each over its own copy of the seeded database, run side by side: in each round one has its outbox on and the other off (roles swapped every round), and their requests interleave one by one, so each round is a pair measured in the same instants. "Overhead" compares the medians of all requests of each state; "paired" is the median over the rounds of (on / off - 1).'
      : 'Rounds alternate outbox on and off on the same service (its triggers switched between rounds). "Overhead" compares the medians of all requests of each state; "paired" is the median over the pairs of rounds of (on / off - 1), so the machine\'s drift between rounds cancels out.',
    '',
    ...table(
      ['Operation', 'Outbox on (median ms)', 'Outbox off (median ms)', 'Added (ms)', 'Overhead', e.interleaved ? 'Overhead, paired (interleaved rounds)' : 'Overhead, paired rounds', 'Runs on', 'Runs off'],
      [
        ['POST /groups', n2(e.groupPost.onMedian, 2), n2(e.groupPost.offMedian, 2), n2(e.groupPost.onMedian - e.groupPost.offMedian, 2), pct(e.groupPost.onMedian, e.groupPost.offMedian), paired(e.groupPost.pairedOverhead), String(e.groupPost.onMs.length), String(e.groupPost.offMs.length)],
        ['POST /groups/{id}/memberships/_bulk (1,000)', n0(e.bulk.onMedian), n0(e.bulk.offMedian), n2(e.bulk.onMedian - e.bulk.offMedian, 1), pct(e.bulk.onMedian, e.bulk.offMedian), paired(e.bulk.pairedOverhead), String(e.bulk.onMs.length), String(e.bulk.offMs.length)],
      ],
    ),
    '',
    db
      ? `- The outbox's own time in PostgreSQL (self time of its functions, pg_stat_user_functions with track_functions = 'pl', in the service's connections): ${n0(db.groupPostUs)} us per POST /groups (${db.functions.map((f) => `${f.name} ${n0(f.selfUs)} us`).join(', ')}), ${n2(db.bulkUs / 1000, 1)} ms per bulk of 1,000; against the medians above, ${pct(e.groupPost.offMedian + db.groupPostUs / 1000, e.groupPost.offMedian)} and ${pct(e.bulk.offMedian + db.bulkUs / 1000, e.bulk.offMedian)} of the request.`
      : "- The outbox's own time in PostgreSQL: not measured (the bench could not set track_functions on this server).",
    `- Webhook delivery: ${e.delivery.events} events (one bulk of 1,000 memberships) reached a local receiver in ${n2(e.delivery.seconds, 1)} s: ${n0(e.delivery.perSecond)} events/s (JOB_CONCURRENCY deliveries at a time per instance).`,
    '- The target is at most 10% overhead; the goal is reported here, not asserted.',
    '',
  ];
}

/** Reads on a replica against the primary alone (bench/replicas.ts, docs/scaling.md). */
export function replicasSection(r: ReplicaBench | undefined): string[] {
  if (!r) return [];
  const med = (shots: { rps: number; dbCpuMs: number; p50: number; bad: number }[], f: 'rps' | 'dbCpuMs' | 'p50') => median(shots.map((s) => s[f]));
  const errors = (shots: { bad: number }[]) => shots.reduce((n, s) => n + s.bad, 0);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    '## Reads on a replica (docs/scaling.md)',
    '',
    `GET /api/v1/groups?limit=20 by a key that writes nothing, ${r.connections} connections, ${r.rounds} alternating rounds of ${r.seconds} s: a service on the primary alone, and a service with one streaming replica (DATABASE_REPLICA_URLS) over the same primary, both on this machine (primary, replica and services share its cores). Primary and replica CPU: utime + stime of each PostgreSQL's processes per 2xx answer.`,
    '',
    ...table(
      ['Reads from', 'req/s (median)', 'p50 (ms)', 'Primary CPU per read (ms)', 'Replica CPU per read (ms)', 'Non-2xx or errors'],
      [
        ['Primary alone', n0(med(r.primaryOnly, 'rps')), n2(med(r.primaryOnly, 'p50'), 1), n2(med(r.primaryOnly, 'dbCpuMs'), 3), '-', String(errors(r.primaryOnly))],
        ['Primary + replica', n0(med(r.withReplica, 'rps')), n2(med(r.withReplica, 'p50'), 1), n2(med(r.withReplica, 'dbCpuMs'), 3), n2(median(r.replicaCpuMs), 3), String(errors(r.withReplica))],
        ...(r.withReplicaRedis
          ? [['Primary + replica, REDIS_URL', n0(med(r.withReplicaRedis, 'rps')), n2(med(r.withReplicaRedis, 'p50'), 1), n2(med(r.withReplicaRedis, 'dbCpuMs'), 3), n2(median(r.replicaRedisCpuMs ?? []), 3), String(errors(r.withReplicaRedis))]]
          : []),
      ],
    ),
    '',
    '- What stays on the primary per read: the gate\'s rate-limit upsert (in PostgreSQL unless REDIS_URL is set; with the PostgreSQL position store it also reads the caller\'s last write position) and a key lookup every KEY_CACHE_TTL_MS; with REDIS_URL both leave it.',
    `- The read-your-writes check per read, median of 1,800 in process: what reading the caller's position adds to counting the request (in the counting statement with PostgreSQL, a GET sent alongside the count with Redis), plus the comparison with the polled replay positions: ${n0(r.checkUs.postgresql)} us with PostgreSQL${r.checkUs.redis !== undefined ? `, ${n0(r.checkUs.redis)} us with Redis` : ''}; the read itself takes ${n2(r.readMs, 2)} ms one at a time: ${pct(r.checkUs.postgresql / 1000 / r.readMs)}${r.checkUs.redis !== undefined ? ` and ${pct(r.checkUs.redis / 1000 / r.readMs)}` : ''} of a read (target: under 5%).`,
    '',
  ];
}

/** The same requests on the main data set and on one ten times larger (bench/scale.ts, docs/performance.md). */
export function scaleSection(r: ScaleReport | undefined): string[] {
  if (!r) return [];
  const size = (x: { groups: number; members: number; memberships: number; bigGroup: number }) =>
    `${n0(x.groups)} groups, ${n0(x.members)} members, ${n0(x.memberships)} memberships (the biggest group ${n0(x.bigGroup)})`;
  const plans: string[] = [];
  for (const c of r.results) {
    for (const [i, st] of c.statements.entries()) {
      plans.push(`${c.label}, statement ${i + 1}: ${st.sql.slice(0, 300)}${st.sql.length > 300 ? ' ...' : ''}`, '');
      plans.push('```', `-- main data set: ${n0(st.small.buffers)} buffers, ${n2(st.small.ms, 3)} ms`, st.small.plan, `-- large data set: ${n0(st.large.buffers)} buffers, ${n2(st.large.ms, 3)} ms`, st.large.plan, '```', '');
    }
  }
  return [
    '## Cost does not grow with the data (docs/performance.md)',
    '',
    `Main data set: ${size(r.small)}. Large data set, another community of the same database: ${size(r.large)}, seeded in SQL in ${n0(r.seedSeconds)} s ` +
      `(its members ${r.membersSeedSeconds ? `in ${n0(r.membersSeedSeconds)} s` : 'already there: the search section seeded them'}; they are the search section's members).`,
    `Each row: ${r.reps} rounds (after 20 unmeasured ones) of one REST request per data set with a key of its community, one at a time, small and large back to back (which goes first alternates); ` +
      'ratio: large p50 / main p50; paired: the median over the rounds of large / main. Buffers: shared buffers (hit + read) of each statement the request runs, ' +
      'EXPLAIN (ANALYZE, BUFFERS) EXECUTE as the service role under row-level security after five executions of the prepared statement (so a generic plan shows when PostgreSQL picks one).',
    '',
    ...table(
      ['Request', 'Main p50 / p95 ms', 'Large p50 / p95 ms', 'Large / main (p50)', 'Paired', 'Buffers per statement, main / large', 'Goal'],
      r.results.map((c) => [
        c.label,
        `${n2(c.small.p50)} / ${n2(c.small.p95)}`,
        `${n2(c.large.p50)} / ${n2(c.large.p95)}`,
        `${n2(c.ratio)}x`,
        `${n2(c.paired)}x`,
        c.statements.map((s) => `${n0(s.small.buffers)} / ${n0(s.large.buffers)}`).join('; '),
        `<= ${n2(c.limit, 1)}x: ${c.ratio <= c.limit ? 'yes' : 'no'}`,
      ]),
    ),
    '',
    '<details><summary>Plans of every statement (main, then large)</summary>',
    '',
    ...plans,
    '</details>',
    '',
  ];
}
