import { pairedRatio, type Arm } from './measure';
import type { BenchResults } from './report';

export interface Goal {
  goal: string;
  measured: string;
  target: string;
  status: 'pass' | 'short' | 'pass (minimum only)' | 'not measured';
}

const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : 'n/a');
const ms = (v: number) => (Number.isFinite(v) ? `${Math.round(v).toLocaleString('en')} ms` : 'n/a');

function atMost(goal: string, value: number, limit: number, unit: (v: number) => string, note?: string): Goal {
  if (!Number.isFinite(value)) return { goal, measured: note ?? 'n/a', target: `<= ${unit(limit)}`, status: 'not measured' };
  return { goal, measured: unit(value), target: `<= ${unit(limit)}`, status: value <= limit ? 'pass' : 'short' };
}

/** Every goal of the bench (docs/performance.md), with the value measured in this run. */
export function goals(r: BenchResults): Goal[] {
  const out: Goal[] = [];
  for (const l of r.load.filter((x) => x.op.list)) {
    const op = l.op;
    const v = pairedRatio(l, 'rest', 'raw');
    out.push({
      goal: `List throughput vs raw: ${op.label}`,
      measured: x(v),
      target: '>= 0.50x (>= 0.33x at the very least)',
      status: v >= 0.5 ? 'pass' : v >= 0.33 ? 'pass (minimum only)' : 'short',
    });
  }
  for (const l of r.load) {
    const v = pairedRatio(l, 'rest', 'graphql');
    // CPU per request is steadier than throughput on a busy machine: shown as a second opinion.
    const cpu = l.arms.graphql.cpuMsMedian / l.arms.rest.cpuMsMedian;
    out.push({
      goal: `REST vs direct GraphQL: ${l.op.label}`,
      measured: `${x(v)} (by CPU per request ${x(cpu)})`,
      target: '>= 1.00x',
      status: v >= 1 ? 'pass' : 'short',
    });
  }
  for (const t of r.singles.filter((s) => s.graphql.length)) {
    // Time: GraphQL's over REST's is REST's speed ratio. Medians, not pairs: these runs take
    // a second in all, too short for drift, and pairs of single runs are noisier.
    const v = t.graphqlMedian / t.restMedian;
    out.push({ goal: `REST vs direct GraphQL: ${t.label}`, measured: x(v), target: '>= 1.00x', status: v >= 1 ? 'pass' : 'short' });
  }
  const sqlPage = (a: string, b: string) => {
    const ca = r.sql.rest[a]?.all;
    const cb = r.sql.rest[b]?.all;
    return { measured: `${ca} vs ${cb} statements`, ok: ca !== undefined && ca === cb };
  };
  for (const [a, b, what] of [['groups20', 'groups100', 'groups'], ['memberships20', 'memberships100', 'memberships']]) {
    const { measured, ok } = sqlPage(a, b);
    if (r.sql.rest[a] && r.sql.rest[b]) {
      out.push({ goal: `SQL per request constant in page size (${what}, limit=20 vs 100)`, measured, target: 'equal', status: ok ? 'pass' : 'short' });
    }
  }
  const auth = r.sql.auth;
  out.push({
    goal: 'Auth costs no SQL on a warm key cache',
    measured: `${auth.warmKeyLookups} key lookups per warm request`,
    target: '0',
    status: auth.warmKeyLookups === 0 ? 'pass' : 'short',
  });
  out.push({
    goal: 'Key cache TTL is short; revocation is immediate on the revoking instance',
    measured: `TTL ${auth.ttlMs} ms; ${auth.statusBeforeRevoke} before, ${auth.revokedStatus} right after revokeApiKey`,
    target: 'TTL <= 60 s; 403 at once',
    status: auth.ttlMs <= 60_000 && auth.revokedStatus === 403 && auth.statusBeforeRevoke === 200 ? 'pass' : 'short',
  });
  const single = (id: string) => r.singles.find((s) => s.id === id);
  out.push(atMost('Bulk create of 1,000 memberships (REST)', single('bulk')?.restMedian ?? NaN, 250, ms));
  out.push(atMost('Reorder of 10,000 memberships (REST)', single('reorder')?.restMedian ?? NaN, 500, ms));
  const imp = single('import');
  out.push(atMost('Import of 100,000 members (REST, until COMPLETED)', (imp?.restMedian ?? NaN) / 1000, 30, (v) => `${v.toFixed(1)} s`, imp?.note));
  const safety = (id: string) => r.safety?.find((c) => c.id === id)?.ratio ?? NaN;
  out.push(atMost('POST with Idempotency-Key vs without (time ratio, one small create)', safety('idempotentPost'), 1.15, x));
  out.push(atMost('POST with Idempotency-Key vs without (time ratio, bulk of 100)', safety('idempotentBulk'), 1.15, x));
  out.push(atMost('Conditional GET answered 304 vs the full GET (time ratio)', safety('conditionalGet'), 1.0, x));
  out.push(atMost(`Peak RSS under ${r.meta.settings.connections} connections`, r.memory.service.peakMb, 150, (v) => `${Math.round(v)} MB`));
  out.push(...peerGoals(r));
  for (const c of r.scale?.results ?? []) {
    out.push(atMost(`Cost does not grow with the data: ${c.label}, large / main data set (p50)`, c.ratio, c.limit, x));
  }
  return out;
}

/**
 * Today's figures for writes (bench/RESULTS.md of commit 4278091, Node 20, before the PostGraphile comparison):
 * the writes must stay at or under them. Absolute numbers: compare on a quiet machine.
 */
export const WRITE_BASELINE = { addGroupRps: 975, bulkMs: 69, reorderMs: 308, importS: 4.4 };

function atLeast(goal: string, value: number, min: number, unit: (v: number) => string, note?: string): Goal {
  if (!Number.isFinite(value)) return { goal, measured: note ?? 'n/a', target: `>= ${unit(min)}`, status: 'not measured' };
  return { goal, measured: unit(value), target: `>= ${unit(min)}`, status: value >= min ? 'pass' : 'short' };
}

/** Against PostGraphile and the raw arm, in this run. */
export function peerGoals(r: BenchResults): Goal[] {
  const out: Goal[] = [];
  const op = (id: string) => r.load.find((l) => l.op.id === id);
  const ratio = (id: string, a: Arm, b: Arm) => {
    const l = op(id);
    return l && l.arms[a].rps.length && l.arms[b].rps.length ? pairedRatio(l, a, b) : NaN;
  };
  const node = (a: Arm) => r.meta.nodes?.[a] ?? r.meta.node;
  const likeForLike = node('rest') === node('postgraphile5') ? '' : ` (REST on Node ${node('rest')}, PostGraphile 5 on ${node('postgraphile5')}: not like for like)`;
  const g20 = op('groups20');
  out.push(atLeast(`GET /groups?limit=20 vs PostGraphile 5, throughput${likeForLike}`, ratio('groups20', 'rest', 'postgraphile5'), 1.2, x));
  const cpuRest = g20?.arms.rest.cpuMsMedian ?? NaN;
  const cpuPg5 = g20?.arms.postgraphile5.cpuMsMedian ?? NaN;
  out.push({
    ...atMost('GET /groups?limit=20 server CPU per request vs PostGraphile 5', cpuRest / cpuPg5, 1, x),
    measured: Number.isFinite(cpuRest / cpuPg5) ? `${x(cpuRest / cpuPg5)} (${cpuRest.toFixed(2)} vs ${cpuPg5.toFixed(2)} ms)` : 'n/a',
  });
  const pgRest = g20?.arms.rest.dbCpuMsMedian ?? NaN;
  const pgPg5 = g20?.arms.postgraphile5.dbCpuMsMedian ?? NaN;
  // `plain`: the same service without row-level security and with its counts in Redis (measure.ts).
  const pgPlain = g20?.arms.plain?.rps.length ? g20.arms.plain.dbCpuMsMedian : NaN;
  out.push({
    ...atMost('GET /groups?limit=20 PostgreSQL CPU per request vs PostGraphile 5', pgRest / pgPg5, 1, x),
    measured: Number.isFinite(pgRest / pgPg5)
      ? `${x(pgRest / pgPg5)} (${pgRest.toFixed(3)} vs ${pgPg5.toFixed(3)} ms${Number.isFinite(pgPlain) ? `; without row-level security and with the counts in Redis ${pgPlain.toFixed(3)} ms, ${x(pgPlain / pgPg5)}` : ''})`
      : 'n/a',
  });
  out.push(atLeast('GET /groups?limit=20 vs PostGraphile 4, throughput', ratio('groups20', 'rest', 'postgraphile4'), 1.5, x));
  out.push(atLeast('GET /groups?limit=20 vs raw', ratio('groups20', 'rest', 'raw'), 0.65, x));
  out.push(atLeast('the same document on /graphql vs PostGraphile 5', ratio('groups20', 'graphql', 'postgraphile5'), 1, x));
  out.push(atLeast('GET /groups/{id} vs raw', ratio('group', 'rest', 'raw'), 0.5, x));
  out.push(atLeast('GET /groups/{externalId}?key=externalId vs raw', ratio('groupExt', 'rest', 'raw'), 0.5, x));
  out.push(atLeast('memberships of the 10,000-member group, limit=100, vs raw', ratio('memberships100', 'rest', 'raw'), 0.6, x));
  const reads = r.load.filter((l) => l.op.method === 'GET' && l.arms.rest.halfRate);
  const worst = reads.reduce<{ p99: number; label: string }>((w, l) => (l.arms.rest.halfRate!.p99 > w.p99 ? { p99: l.arms.rest.halfRate!.p99, label: l.op.label } : w), { p99: -Infinity, label: '' });
  out.push({
    ...atMost('p99 at half of saturation on every read route (REST, worst)', reads.length ? worst.p99 : NaN, 10, (v) => `${v.toFixed(1)} ms`),
    ...(reads.length ? { measured: `${worst.p99.toFixed(1)} ms (${worst.label})` } : {}),
  });
  // "No loss": the capped service's throughput over the uncapped one's, paired per round; 0.95 allows the rounds' noise.
  // Live heap: heapUsed after a full GC at the end of the load phase; peak RSS: VmHWM then (boot included).
  const capped = ratio('groups20', 'rest', 'uncapped');
  const peak = r.memory.service.peakMb;
  const live = r.memory.service.liveHeapMb ?? NaN;
  out.push({
    goal: `Live heap under 60 MB and peak RSS under 150 MB under ${r.meta.settings.connections} connections, no loss against an uncapped heap (GET /groups?limit=20, REST / uncapped >= 0.95x)`,
    measured: Number.isFinite(capped)
      ? `live ${Number.isFinite(live) ? Math.round(live) : 'n/a'} MB, peak ${Math.round(peak)} MB; ${x(capped)} (uncapped: live ${Math.round(r.memory.uncapped?.liveHeapMb ?? NaN)} MB, peak ${Math.round(r.memory.uncapped?.peakMb ?? NaN)} MB)`
      : 'the uncapped arm was not run',
    target: '< 60 MB, < 150 MB and >= 0.95x',
    status: !Number.isFinite(capped) || !Number.isFinite(live) ? 'not measured' : live < 60 && peak < 150 && capped >= 0.95 ? 'pass' : 'short',
  });
  // Row-level security on (rest) against off (norls, DB_ROW_SECURITY=off), paired per round.
  for (const [id, label] of [['groups20', 'GET /groups?limit=20'], ['addGroup', 'POST /groups']]) {
    out.push(atLeast(`${label} with row-level security vs without (REST / norls, throughput)`, ratio(id, 'rest', 'norls'), 0.95, x));
  }
  const single = (id: string) => r.singles.find((s) => s.id === id)?.restMedian ?? NaN;
  const b = WRITE_BASELINE;
  out.push(atLeast(`POST /groups does not regress (${b.addGroupRps} req/s before)`, op('addGroup')?.arms.rest.rpsMedian ?? NaN, b.addGroupRps, (v) => `${Math.round(v)} req/s`));
  out.push(atMost(`bulk of 1,000 does not regress (${b.bulkMs} ms before)`, single('bulk'), b.bulkMs, ms));
  out.push(atMost(`reorder of 10,000 does not regress (${b.reorderMs} ms before)`, single('reorder'), b.reorderMs, ms));
  out.push(atMost(`import of 100,000 does not regress (${b.importS} s before)`, single('import') / 1000, b.importS, (v) => `${v.toFixed(1)} s`));
  return out;
}
