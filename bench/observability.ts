import { median, shoot } from './load';
import { otlpSink, scrapeEverySecond, startServer, type Server } from './proc';

/**
 * What metrics and tracing cost on the groups page (GET /api/v1/groups?limit=20): four
 * service processes over the same database, measured in the same rounds, interleaved with
 * the order rotated per round. Fresh processes for each fork (`forks` x `rounds` rounds): two
 * processes of the very same configuration can differ for their whole life (JIT and heap
 * layout), so one process per arm would measure the processes, not the arms. Rounds are short
 * (1 s) and many: on a shared machine the speed of the machine itself moves by 5-8% from one
 * second to the next, and a ratio of two rounds measured seconds apart carries that; four
 * interleaved rounds of 1 s fit where one of 4 s did, and the median of their ratios is about
 * twice as steady (docs/performance.md, "Observability overhead"). The arms:
 * - off: METRICS_ENABLED=false, no OTEL_* (the SDK is not loaded);
 * - control: a second process configured as off: its ratio to off is the noise floor of the
 *   run, what the method reports for a difference of nothing;
 * - metrics: Prometheus metrics on (the default), scraped every second as Prometheus would;
 * - tracing: metrics on, and OpenTelemetry exporting OTLP/HTTP (protobuf, the SDK's default) to
 *   a local receiver with OTEL_TRACES_SAMPLER=parentbased_traceidratio at 0.1 (10% of traces).
 */
export interface ObservabilityArm {
  id: 'off' | 'control' | 'metrics' | 'tracing';
  label: string;
  rps: number[];
  rpsMedian: number;
  p50: number;
  p99: number;
  /** Median of the per-round ratios to `off` (1 - ratio is the throughput lost). */
  vsOff: number;
  /** Server CPU per 2xx response, ms (median over rounds). */
  cpuMs: number;
  /**
   * Median of the per-round ratios of `off`'s CPU per response to this arm's: the throughput
   * left when the server is CPU-bound, and far less disturbed by other load on the machine
   * than requests per second (the server's own CPU time is counted, not the wall clock).
   */
  cpuVsOff: number;
}

export interface ObservabilityReport {
  path: string;
  forks: number;
  /** Rounds per fork. */
  rounds: number;
  seconds: number;
  warmSeconds: number;
  connections: number;
  arms: ObservabilityArm[];
  /** Bytes and requests the local OTLP receiver got (proof that spans were exported). */
  exported: { requests: number; bytes: number };
}

export interface ObservabilityOptions {
  args: string[];
  env: Record<string, string>;
  node: string;
  logDir: string;
  key: string;
  forks: number;
  rounds: number;
  seconds: number;
  warmSeconds: number;
  connections: number;
  log: (line: string) => void;
  /** BENCH_PROFILE=1: each arm's processes run with `--cpu-prof` into `<profileDir>/obs-<arm>`, summarised per arm. */
  profileDir?: string;
}

export const OBSERVABILITY_GOALS = { metrics: 0.05, tracing: 0.1 };

export async function timeObservability(o: ObservabilityOptions): Promise<ObservabilityReport> {
  const sink = await otlpSink();
  const arms: { id: ObservabilityArm['id']; label: string; env: Record<string, string> }[] = [
    { id: 'off', label: 'metrics and tracing off', env: { METRICS_ENABLED: 'false' } },
    { id: 'control', label: 'control: off again, in a process of its own', env: { METRICS_ENABLED: 'false' } },
    { id: 'metrics', label: 'metrics on (scraped every second)', env: { METRICS_ENABLED: 'true' } },
    {
      id: 'tracing',
      label: 'metrics on + tracing, 10% sampled, OTLP to a local receiver',
      env: {
        METRICS_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        // BENCH_OBS_SAMPLE: another ratio, to tell what every request pays from what sampled ones do.
        OTEL_TRACES_SAMPLER_ARG: process.env.BENCH_OBS_SAMPLE || '0.1',
        OTEL_SERVICE_NAME: 'community-api-bench',
      },
    },
  ];
  const req = { method: 'GET', path: '/api/v1/groups?limit=20', headers: { 'x-api-key': o.key } };
  const shots = arms.map(() => [] as Awaited<ReturnType<typeof shoot>>[]);
  const servers: (Server | undefined)[] = [];
  const scrapes: NodeJS.Timeout[] = [];
  const stopAll = async () => {
    for (const t of scrapes.splice(0)) clearInterval(t);
    for (const s of servers.splice(0)) await s?.stop().catch(() => undefined);
  };
  try {
    for (let fork = 0; fork < o.forks; fork++) {
      // Started, warmed and first measured in an order rotated per fork.
      for (let k = 0; k < arms.length; k++) {
        const i = (k + fork) % arms.length;
        const prof = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}/obs-${arms[i].id}`] : [];
        servers[i] = await startServer(`obs-${arms[i].id}`, [...prof, ...o.args], { ...o.env, ...arms[i].env }, `${o.logDir}/obs-${arms[i].id}-${fork}.log`, o.node);
      }
      // Prometheus scrapes (15 s is its default; every second here, an upper bound on the scrape's share).
      for (const [i, arm] of arms.entries()) {
        if (arm.env.METRICS_ENABLED === 'true') scrapes.push(scrapeEverySecond(`${servers[i]!.url}/metrics`));
      }
      for (let k = 0; k < arms.length; k++) await shoot(servers[(k + fork) % arms.length]!, req, { connections: o.connections, seconds: o.warmSeconds });
      for (let round = 0; round < o.rounds; round++) {
        const n = fork * o.rounds + round;
        for (let k = 0; k < arms.length; k++) {
          const i = (k + n) % arms.length;
          shots[i].push(await shoot(servers[i]!, req, { connections: o.connections, seconds: o.seconds }));
        }
        o.log(`observability fork ${fork + 1} round ${round + 1}: ${arms.map((a, i) => `${a.id} ${Math.round(shots[i][n].rps)}/s ${shots[i][n].cpuMs.toFixed(3)} ms CPU`).join(', ')}`);
      }
      await stopAll();
    }
    return {
      path: req.path,
      forks: o.forks,
      rounds: o.rounds,
      seconds: o.seconds,
      warmSeconds: o.warmSeconds,
      connections: o.connections,
      exported: sink.exported,
      arms: arms.map((a, i) => ({
        id: a.id,
        label: a.label,
        rps: shots[i].map((s) => s.rps),
        rpsMedian: median(shots[i].map((s) => s.rps)),
        p50: median(shots[i].map((s) => s.p50)),
        p99: median(shots[i].map((s) => s.p99)),
        vsOff: median(shots[i].map((s, r) => s.rps / shots[0][r].rps)),
        cpuMs: median(shots[i].map((s) => s.cpuMs)),
        cpuVsOff: median(shots[i].map((s, r) => shots[0][r].cpuMs / s.cpuMs)),
      })),
    };
  } finally {
    await stopAll();
    await sink.close();
  }
}

/** The RESULTS.md section. */
export function renderObservability(r: ObservabilityReport | undefined): string[] {
  if (!r) return [];
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const goal = (a: ObservabilityArm) => {
    if (a.id === 'off') return '';
    if (a.id === 'control') return `noise floor: ${pct(1 - a.cpuVsOff)} by CPU per response, ${pct(1 - a.vsOff)} by 2xx/s for the same configuration`;
    const limit = OBSERVABILITY_GOALS[a.id];
    const lost = 1 - a.cpuVsOff;
    return `${pct(lost)} lost by CPU per response, ${pct(1 - a.vsOff)} by 2xx/s (goal <= ${pct(limit)}): ${lost <= limit ? 'met' : 'NOT met'} by CPU`;
  };
  return [
    '## Metrics and tracing overhead',
    '',
    `\`GET ${r.path}\`, four service processes over the same database, started fresh ${r.forks} times (forks); each fork's processes warmed for ${r.warmSeconds} s, then ${r.rounds} rounds x ${r.seconds} s each at ${r.connections} connections, ` +
      'interleaved with the order rotated per round (`bench/observability.ts`: fresh processes because two of one configuration can differ for their whole life; short rounds because the machine\'s own speed moves from one second to the next). ' +
      `Ratio: median of the ${r.forks * r.rounds} per-round ratios to the arm with both off. The control arm is configured as off: its distance from 1 is what this method measures for no difference.`,
    '',
    '| Arm | 2xx/s (median) | p50 ms | p99 ms | 2xx/s vs off | CPU ms / 2xx | throughput by CPU vs off | Cost |',
    '|---|---|---|---|---|---|---|---|',
    ...r.arms.map(
      (a) => `| ${a.label} | ${Math.round(a.rpsMedian)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.vsOff.toFixed(3)} | ${a.cpuMs.toFixed(3)} | ${a.cpuVsOff.toFixed(3)} | ${goal(a)} |`,
    ),
    '',
    'Throughput by CPU: the server\'s own CPU time per 2xx response (utime + stime from /proc), off\'s divided by the arm\'s, median of the rounds. ' +
      'It is what the arm keeps of the throughput when the server is the bottleneck, and unlike 2xx/s it is not moved by other processes on a shared machine.',
    '',
    `The local OTLP receiver got ${r.exported.requests} export requests (${(r.exported.bytes / 1024).toFixed(0)} KiB) during the run.`,
    '',
  ];
}
