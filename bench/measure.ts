import { median, shoot, type HttpRequest, type Shot } from './load';
import { paced } from './paced';
import { graphqlBody, type LoadOp } from './ops';
import type { Server } from './proc';

export const ARMS = ['rest', 'graphql', 'raw', 'postgraphile4', 'postgraphile5', 'uncapped', 'redis', 'nojit', 'norls', 'plain'] as const;
export type Arm = (typeof ARMS)[number];
/** The service's arms and its yardstick; the peers (PostGraphile) answer only the ops with a `peer` document. */
export const OWN_ARMS = ['rest', 'graphql', 'raw'] as const satisfies readonly Arm[];
export const PEER_ARMS = ['postgraphile4', 'postgraphile5'] as const satisfies readonly Arm[];
export const isPeer = (a: Arm): boolean => (PEER_ARMS as readonly Arm[]).includes(a);
/**
 * Variants of the service, each the REST route of a second service process measured in the
 * same rounds: `uncapped` runs without the production heap flags ("the heap flags
 * cost no throughput"), `redis` with REDIS_URL (the rate-limit statement in Redis instead of
 * PostgreSQL), `nojit` with GRAPHQL_JIT=false (the route documents on graphql-js's execute instead of
 * compiled by graphql-jit), `norls` with DB_ROW_SECURITY=off (requests not switched to the
 * row-level security role), `plain` with both DB_ROW_SECURITY=off and REDIS_URL (the page's
 * PostgreSQL work without the tenancy layer and without the rate-limit count in PostgreSQL:
 * the two things the service's PostgreSQL does per request that PostGraphile's does not). Like
 * the peers they serve only the hot list page (the ops with a `peer` document); `norls` also
 * serves POST /groups (ROW_SECURITY_OPS).
 */
export const VARIANT_ARMS = ['uncapped', 'redis', 'nojit', 'norls', 'plain'] as const satisfies readonly Arm[];
const HOT_ONLY_ARMS: readonly Arm[] = [...PEER_ARMS, ...VARIANT_ARMS];
/** The ops row-level security is measured on, on and off in the same rounds. */
export const ROW_SECURITY_OPS = ['groups20', 'addGroup'];
/** The arms that serve `op`. */
export const armsOf = (op: LoadOp, arms: readonly Arm[]): Arm[] =>
  arms.filter((a) => !HOT_ONLY_ARMS.includes(a) || op.peer !== undefined || (a === 'norls' && ROW_SECURITY_OPS.includes(op.id)));

export interface ArmResult {
  /** Per round, in round order (so arms of one round pair up). */
  rps: number[];
  cpuMs: number[];
  dbCpuMs: number[];
  /** autocannon's p99 under saturation, per round (ms). */
  p99: number[];
  /** Non-2xx responses, errors and timeouts over every run of the arm: must stay 0. */
  bad: number;
  rpsMedian: number;
  cpuMsMedian: number;
  dbCpuMsMedian: number;
  p99Median: number;
  /** At half of the arm's saturated throughput. */
  halfRate?: { rate: number; p50: number; p99: number; lateMs: number };
}

export interface OpResult {
  op: LoadOp;
  arms: Record<Arm, ArmResult>;
}

/**
 * Throughput of arm `a` over arm `b`: the median of the per-round ratios. The arms of a
 * round ran back to back, so a ratio within a round cancels drift between rounds.
 */
export function pairedRatio(r: OpResult, a: Arm, b: Arm): number {
  return median(r.arms[a].rps.map((x, i) => x / r.arms[b].rps[i]));
}

export interface LoadSettings {
  connections: number;
  rounds: number;
  seconds: number;
  warmSeconds: number;
  /** The warm-up of each arm on the first op it serves (the JIT's and the heap's, not only the op's). */
  firstWarmSeconds: number;
  latencySeconds: number;
  /** The arms to run (all three unless a partial run, e.g. a profile of REST alone). */
  arms: readonly Arm[];
  dbCpu?: () => number;
}

export function armRequest(arm: Arm, op: LoadOp, key: string): HttpRequest {
  const headers: Record<string, string> = { 'x-api-key': key };
  if (isPeer(arm)) {
    if (!op.peer) throw new Error(`bench: ${op.id} has no peer document`);
    return { method: 'POST', path: '/graphql', body: JSON.stringify(op.peer[arm as 'postgraphile4' | 'postgraphile5']), headers: { 'content-type': 'application/json' } };
  }
  if (arm === 'graphql') {
    return { method: 'POST', path: '/graphql', body: graphqlBody(op), headers: { ...headers, 'content-type': 'application/json' } };
  }
  if (op.body === undefined) return { method: op.method, path: op.path, headers };
  return { method: op.method, path: op.path, body: JSON.stringify(op.body), headers: { ...headers, 'content-type': 'application/json' } };
}

/**
 * Saturated throughput of every op in every arm, interleaved: each round runs every op
 * in all three arms back to back (the arm order rotates per round), so drift in machine
 * load hits the arms alike and the ratios of one run compare. Medians over the rounds.
 * Then p50/p99 at half of each arm's own saturated rate, paced evenly (paced.ts).
 */
export async function measureLoad(
  servers: Partial<Record<Arm, Server>>,
  key: string,
  ops: LoadOp[],
  s: LoadSettings,
  log: (line: string) => void,
): Promise<OpResult[]> {
  const results: OpResult[] = ops.map((op) => ({
    op,
    arms: Object.fromEntries(ARMS.map((a) => [a, { rps: [], cpuMs: [], dbCpuMs: [], p99: [], bad: 0, rpsMedian: NaN, cpuMsMedian: NaN, dbCpuMsMedian: NaN, p99Median: NaN }])) as unknown as Record<Arm, ArmResult>,
  }));
  const run = (arm: Arm, op: LoadOp, seconds: number): Promise<Shot> =>
    shoot(servers[arm]!, armRequest(arm, op, key), { connections: s.connections, seconds, dbCpu: s.dbCpu });

  const firstWarm = Math.max(s.warmSeconds, s.firstWarmSeconds);
  log(`warm-up: ${firstWarm} s per arm on its first op, then ${s.warmSeconds} s per op and arm`);
  const warmed = new Set<Arm>();
  for (const { op } of results) {
    for (const arm of armsOf(op, s.arms)) {
      await run(arm, op, warmed.has(arm) ? s.warmSeconds : firstWarm);
      warmed.add(arm);
    }
  }

  for (let round = 0; round < s.rounds; round++) {
    for (const r of results) {
      const arms = armsOf(r.op, s.arms);
      const order = arms.map((_, i) => arms[(i + round) % arms.length]);
      const line: string[] = [];
      for (const arm of order) {
        const shot = await run(arm, r.op, s.seconds);
        const a = r.arms[arm];
        a.rps.push(shot.rps);
        a.cpuMs.push(shot.cpuMs);
        a.dbCpuMs.push(shot.dbCpuMs);
        a.p99.push(shot.p99);
        a.bad += shot.bad;
        line.push(`${arm} ${shot.rps.toFixed(0)}/s${shot.bad ? ` (${shot.bad} bad)` : ''}`);
      }
      log(`round ${round + 1}/${s.rounds} ${r.op.id}: ${line.join(', ')}`);
    }
  }
  for (const r of results) {
    for (const arm of ARMS) {
      const a = r.arms[arm];
      a.rpsMedian = median(a.rps);
      a.cpuMsMedian = median(a.cpuMs);
      a.dbCpuMsMedian = median(a.dbCpuMs);
      a.p99Median = median(a.p99);
    }
  }

  for (const r of results) {
    for (const arm of armsOf(r.op, s.arms)) {
      const a = r.arms[arm];
      const rate = Math.max(1, Math.round(a.rpsMedian / 2));
      const shot = await paced(servers[arm]!.url, armRequest(arm, r.op, key), rate, s.latencySeconds, s.connections);
      a.bad += shot.bad;
      a.halfRate = { rate, p50: shot.p50, p99: shot.p99, lateMs: shot.lateMs };
    }
    const h = (arm: Arm) => `${arm} p50 ${r.arms[arm].halfRate!.p50} ms p99 ${r.arms[arm].halfRate!.p99} ms`;
    log(`half rate ${r.op.id}: ${armsOf(r.op, s.arms).map(h).join(', ')}`);
  }
  return results;
}
