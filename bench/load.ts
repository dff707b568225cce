// autocannon ships no types; the few fields used here are typed below.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<CannonResult>;
import type { Server } from './proc';

interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  requests: { total: number };
  latency: { p50: number; p99: number };
}

export interface HttpRequest {
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

export interface Shot {
  /** 2xx responses per second. */
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU (all threads) per 2xx response, ms. */
  cpuMs: number;
  /** PostgreSQL's CPU per 2xx response, ms (NaN when not measurable). */
  dbCpuMs: number;
  ok: number;
  bad: number;
}

export interface ShotOptions {
  connections: number;
  seconds: number;
  /** CPU ms of the database server so far, when it can be read. */
  dbCpu?: () => number;
}

/** One saturating autocannon run against one server, with the server's CPU time over the same interval. */
export async function shoot(server: Server, req: HttpRequest, opts: ShotOptions): Promise<Shot> {
  const cpuBefore = server.cpuMs();
  const dbBefore = opts.dbCpu?.() ?? NaN;
  const result = await autocannon({
    url: server.url + req.path,
    method: req.method,
    headers: req.headers,
    body: req.body,
    connections: opts.connections,
    duration: opts.seconds,
    pipelining: 1,
    timeout: 30,
  });
  const cpu = server.cpuMs() - cpuBefore;
  const db = (opts.dbCpu?.() ?? NaN) - dbBefore;
  const ok = result['2xx'];
  return {
    rps: ok / (result.duration || opts.seconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs: ok ? cpu / ok : NaN,
    dbCpuMs: ok ? db / ok : NaN,
    ok,
    bad: result.non2xx + result.errors + result.timeouts,
  };
}

export const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** The same request many times without autocannon: for timed single operations. */
export async function timeOnce(url: string, req: HttpRequest): Promise<{ ms: number; status: number; text: string }> {
  const started = performance.now();
  const res = await fetch(url + req.path, { method: req.method, headers: req.headers, body: req.body });
  const text = await res.text();
  return { ms: performance.now() - started, status: res.status, text };
}
