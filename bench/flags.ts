import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { openBenchDatabase } from './db';
import { shoot, median } from './load';
import { armRequest } from './measure';
import { loadOps } from './ops';
import { node24 } from './peers';
import { compileRawServer, otlpSink, runMain, scrapeEverySecond, startServer, threadCpuMs, type Server } from './proc';
import { seed } from './seed';
import { ADMIN_TOKEN } from './sql';

/**
 * Node flag sets of the service side by side: one process per set over the bench's seeded
 * database, `GET /groups?limit=20` at 64 connections in interleaved rounds (order rotated), and
 * per set the peak RSS after start and after the load and the CPU per request, also as the
 * median of per-round ratios to the first set. After `npm run build`:
 *   VARIANTS='{"s16":"--max-old-space-size=192 --max-semi-space-size=16","s8":"--max-old-space-size=192 --max-semi-space-size=8","uncapped":""}' \
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node -r @swc-node/register bench/flags.ts
 * ROUNDS (3) and SECS (5) size the rounds, WARM (1) each process's warm-up in seconds; logs go to .data/bench/flags-<name>.log. A variant
 * whose name starts with `raw` runs bench/raw-server.ts (node:http + pg, the same answers) with
 * its flags instead of the service: what Node itself costs under the same flags and load.
 * OPS (default `groups20`): the bench's load operations to run, each in turn within a round
 * (e.g. `groups20,groups100,memberships100`, the read routes of the full run's load phase);
 * the CPU per request is the first operation's. VARIANT_ENV (JSON, variant name -> variables)
 * adds environment of a variant's own, e.g. tracing for one: `{"traced":{"OTEL_TRACES_SAMPLER":
 * "parentbased_traceidratio","OTEL_TRACES_SAMPLER_ARG":"0.1"}}`; a variant whose environment
 * names `OTEL_EXPORTER_OTLP_ENDPOINT: "sink"` exports to a receiver in this process that
 * counts and drops what it gets. THREADS=1 prints each process's CPU per request over the rounds
 * by thread: the main thread, and V8's workers (the collector's parallel and concurrent work,
 * optimising compilers), which /proc counts in the process's CPU and a CPU profile does not.
 * VARIANT_ENTRY (JSON, variant name -> script) runs another build for a variant, e.g. the
 * commit before a change, built and copied beside `dist` (`{"before":"dist-before/src/main.js"}`;
 * docs/performance.md, "Comparing two builds"). SCRAPE=1 fetches every variant's /metrics once a
 * second for the whole run (SCRAPE=a,b: those variants' only; SCRAPE_PATH, JSON variant name -> path, fetches
 * another path instead, e.g. to give a process with metrics off the same second client), as the observability section does (prom-client's process metrics
 * start with the first scrape).
 */
const variants: Record<string, string> = JSON.parse(process.env.VARIANTS || '{}');
const rounds = Number(process.env.ROUNDS || 3);
const seconds = Number(process.env.SECS || 5);
const opIds = (process.env.OPS || 'groups20').split(',');
const variantEnv: Record<string, Record<string, string>> = JSON.parse(process.env.VARIANT_ENV || '{}');
const variantEntry: Record<string, string> = JSON.parse(process.env.VARIANT_ENTRY || '{}');
async function main() {
  const sink = await otlpSink();
  const db = await openBenchDatabase();
  const seeded = await seed(db.url);
  const env = { DATABASE_URL: db.url, PUBLIC_BASE_URL: 'http://bench.invalid', LOG_LEVEL: 'warn', NODE_ENV: 'production', ADMIN_TOKEN, SECRET_ENCRYPTION_KEYS: randomBytes(32).toString('base64') };
  const servers: Record<string, Server> = {};
  const scrapes: NodeJS.Timeout[] = [];
  let key = '';
  try {
    for (const [name, flags] of Object.entries(variants)) {
      const entry = name.startsWith('raw') ? compileRawServer(path.resolve('.data/bench')) : (variantEntry[name] ?? 'dist/src/main.js');
      const own = Object.fromEntries(Object.entries(variantEnv[name] ?? {}).map(([k, v]) => [k, k === 'OTEL_EXPORTER_OTLP_ENDPOINT' && v === 'sink' ? sink.url : v]));
      servers[name] = await startServer(name, [...flags.split(' ').filter(Boolean), entry], { ...env, ...own }, path.resolve(`.data/bench/flags-${name}.log`), node24());
      if (!key && !name.startsWith('raw')) {
        const res = await fetch(`${servers[name].url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify({ query: 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }', variables: { input: { communityId: seeded.communityId, rateLimitPerHour: 1_000_000_000 } } }) });
        key = ((await res.json()) as { data: { createApiKey: { key: string } } }).data.createApiKey.key;
      }
    }
    const boot = Object.fromEntries(Object.entries(servers).map(([n, s]) => [n, s.memory().peakMb]));
    const known = loadOps(seeded);
    const ops = opIds.map((id) => known.find((o) => o.id === id) ?? fail(`OPS: no load operation ${id}`));
    const [op] = ops;
    const names = Object.keys(servers);
    if (!key) fail('VARIANTS: at least one variant must run the service (it makes the API key)');
    for (const n of names) await shoot(servers[n], armRequest('rest', op, key), { connections: 64, seconds: Number(process.env.WARM || 1) });
    const scraped = process.env.SCRAPE === '1' ? names : (process.env.SCRAPE ?? '').split(',').filter((n) => servers[n]);
    const scrapePath: Record<string, string> = JSON.parse(process.env.SCRAPE_PATH || '{}');
    for (const n of scraped) scrapes.push(scrapeEverySecond(`${servers[n].url}${scrapePath[n] ?? '/metrics'}`));
    const cpu: Record<string, number[]> = {}, rps: Record<string, number[]> = {};
    const threadsBefore = Object.fromEntries(names.map((n) => [n, threadCpuMs(servers[n].pid)]));
    const answered: Record<string, number> = {};
    for (let r = 0; r < rounds; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]);
      for (const n of order) {
        const s = await shoot(servers[n], armRequest('rest', op, key), { connections: 64, seconds });
        (cpu[n] ??= []).push(s.cpuMs); (rps[n] ??= []).push(s.rps);
        answered[n] = (answered[n] ?? 0) + s.ok;
        for (const other of ops.slice(1)) await shoot(servers[n], armRequest('rest', other, key), { connections: 64, seconds });
      }
      console.log(`round ${r + 1}: ${order.map((n) => `${n} ${rps[n][r].toFixed(0)}/s ${cpu[n][r].toFixed(2)}ms`).join(', ')}`);
    }
    // THREADS=1: each process's CPU over the rounds by thread, per request (us): GC helpers and libuv's pool work off the main thread.
    if (process.env.THREADS === '1') {
      for (const n of names) {
        const after = threadCpuMs(servers[n].pid);
        const per = Object.entries(after).map(([t, ms]) => `${t} ${(((ms - (threadsBefore[n][t] ?? 0)) * 1000) / answered[n]).toFixed(1)}`);
        console.log(`${n} CPU us per request by thread: ${per.join(', ')}`);
      }
    }
    const base = names[0];
    for (const n of names) {
      const ratio = median(cpu[n].map((c, i) => c / cpu[base][i]));
      console.log(`${n.padEnd(14)} flags "${variants[n]}": boot peak ${boot[n].toFixed(0)} MB, peak ${servers[n].memory().peakMb.toFixed(0)} MB, cpu/req median ${median(cpu[n]).toFixed(2)} ms, vs ${base} ${ratio.toFixed(3)}x, rps median ${median(rps[n]).toFixed(0)}`);
    }
  } finally {
    for (const t of scrapes) clearInterval(t);
    for (const s of Object.values(servers)) await s.stop().catch(() => undefined);
    await db.close();
    if (sink.exported.requests) console.log(`OTLP receiver: ${sink.exported.requests} export requests, ${(sink.exported.bytes / 1024).toFixed(0)} KiB`);
    await sink.close();
  }
}

function fail(message: string): never {
  throw new Error(`bench/flags.ts: ${message}`);
}

runMain(main);
