import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openBenchDatabase, type BenchDatabase } from './db';
import { attachInspector, inspectFlag, type Inspector, type LiveMemory } from './inspector';
import { shoot } from './load';
import { armRequest } from './measure';
import { loadOps } from './ops';
import { node24, NODE24_VERSION } from './peers';
import { laterPort, runMain, startServer, type Server } from './proc';
import { seed } from './seed';
import { ADMIN_TOKEN } from './sql';
import { packageOf, summarize } from './heap-summary';

/**
 * What is live in the service: heap snapshots of the production build (dist/, the
 * production node flags, NODE_ENV=production) over the bench's seeded database, one after
 * start and one after a load of `GET /groups?limit=20` at 64 connections, each summarised
 * by bench/heap-summary.ts, with process.memoryUsage() after a full GC and the process's
 * smaps_rollup. Run `npm run build` first, then
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node -r @swc-node/register bench/heap.ts
 * (without DATABASE_URL: the embedded PostgreSQL on BENCH_PG_PORT). Writes .data/bench/heap/.
 * HEAP_SECONDS (default 20) is the load; HEAP_FLAGS replaces the production flags; HEAP_NODE=current
 * runs the service on the Node running this script; HEAP_MAIN measures another build (default
 * dist/src/main.js); HEAP_ALLOC=1 adds the allocations per request (sampling heap profiler);
 * HEAP_SNAPSHOTS=0 skips the snapshots (memory figures only); HEAP_OUT moves the output.
 */
const OUT = path.resolve(process.env.HEAP_OUT || '.data/bench/heap');
const seconds = Number(process.env.HEAP_SECONDS || 20);
const connections = Number(process.env.BENCH_CONNECTIONS || 64);
const entry = process.env.HEAP_MAIN || 'dist/src/main.js';
const flags = (process.env.HEAP_FLAGS ?? JSON.parse(fs.readFileSync('package.json', 'utf8')).config?.nodeFlags ?? '').split(' ').filter(Boolean);

const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

/** The sampled allocations of the load per request, by allocating function and by package. */
function allocationSummary(head: AllocNode, requests: number): string[] {
  const byFn = new Map<string, number>();
  const byPkg = new Map<string, number>();
  let total = 0;
  const walk = (n: AllocNode) => {
    if (n.selfSize) {
      const f = n.callFrame;
      const where = f.url ? `${packageOf(f.url)} ${f.url.split('/').slice(-1)[0]}:${f.lineNumber + 1}` : '(native)';
      byFn.set(`${f.functionName || '(anonymous)'} ${where}`, (byFn.get(`${f.functionName || '(anonymous)'} ${where}`) ?? 0) + n.selfSize);
      byPkg.set(f.url ? packageOf(f.url) : '(native)', (byPkg.get(f.url ? packageOf(f.url) : '(native)') ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    n.children.forEach(walk);
  };
  walk(head);
  const kb = (b: number) => `${(b / requests / 1024).toFixed(1).padStart(7)} KB`;
  const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, b]) => `${kb(b)}  ${name}`);
  return [
    `### Allocated per request during the load (sampling heap profiler; ${kb(total).trim()} in all)`, '', '```',
    'By package:', ...top(byPkg, 25), '', 'By function:', ...top(byFn, 40), '```',
  ];
}

async function snapshot(inspector: Inspector, label: string, report: string[]) {
  const file = path.join(OUT, `${label}.heapsnapshot`);
  await inspector.heapSnapshot(file);
  const s = summarize(file, 30);
  report.push(`### Snapshot ${label}`, '', '```', ...s.lines, '```', '');
  console.log(`${label}: snapshot ${s.totalMb.toFixed(1)} MB reachable`);
}

function describe(m: LiveMemory, when: string): string[] {
  return [
    `process.memoryUsage() ${when}: rss ${mb(m.rss)}, heapTotal ${mb(m.heapTotal)}, heapUsed ${mb(m.heapUsed)}, external ${mb(m.external)} (arrayBuffers ${mb(m.arrayBuffers)})`,
    `V8 spaces over 0.1 MB (size / resident / used): ${m.spaces.filter((s) => s.size > 100_000).map((s) => `${s.name} ${mb(s.size)} / ${mb(s.physical)} / ${mb(s.used)}`).join('; ')}`,
  ];
}

function smaps(pid: number): string[] {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const pick = (name: string) => new RegExp(`^${name}:.*$`, 'm').exec(status)?.[0].replace(/\s+/g, ' ') ?? '';
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n').filter((l) => /^(Rss|Pss_Anon|Pss_File|Anonymous):/.test(l)).map((l) => l.replace(/\s+/g, ' '));
  return [`/proc status: ${['VmHWM', 'VmRSS', 'RssAnon', 'RssFile'].map(pick).join('; ')}`, `smaps_rollup: ${rollup.join('; ')}`];
}

/**
 * The resident memory of /proc/<pid>/smaps by kind: files (the node binary, libraries), the main
 * malloc arena ([heap]), other anonymous mappings by size (V8's pages and reservations, malloc's
 * thread arenas of up to 64 MB, thread stacks).
 */
function mappings(pid: number): string[] {
  const kinds = new Map<string, { rss: number; count: number }>();
  let kind = '';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024;
      const name = head[4];
      kind = name.startsWith('/') ? `file ${path.basename(name)}` : name ? name : size >= 32768 ? 'anon, mappings >= 32 MB' : size >= 1024 ? 'anon, mappings 1-32 MB' : 'anon, mappings < 1 MB';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && kind) {
      const k = kinds.get(kind) ?? { rss: 0, count: 0 };
      k.rss += Number(rss[1]);
      k.count++;
      kinds.set(kind, k);
    }
  }
  const top = [...kinds].filter(([, k]) => k.rss >= 512).sort((a, b) => b[1].rss - a[1].rss);
  return [`Resident by mapping: ${top.map(([name, k]) => `${name} ${(k.rss / 1024).toFixed(1)} MB (${k.count})`).join('; ')}`];
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  if (!fs.existsSync(entry)) throw new Error('bench/heap.ts: run `npm run build` first');
  let db: BenchDatabase | undefined;
  let service: Server | undefined;
  try {
    db = await openBenchDatabase();
    const seeded = await seed(db.url);
    const port = await laterPort();
    const env = {
      DATABASE_URL: db.url, PUBLIC_BASE_URL: 'http://bench.invalid', LOG_LEVEL: 'warn', NODE_ENV: 'production', ADMIN_TOKEN,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SECRET_ENCRYPTION_KEYS: randomBytes(32).toString('base64'),
    };
    const node = process.env.HEAP_NODE === 'current' ? process.execPath : node24();
    service = await startServer('service', [...flags, inspectFlag(port), entry], env, path.join(OUT, 'service.log'), node);
    console.log(`service pid ${service.pid} (Node ${process.env.HEAP_NODE === 'current' ? process.version : NODE24_VERSION}, flags ${flags.join(' ')})`);
    const res = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ query: 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }', variables: { input: { communityId: seeded.communityId, rateLimitPerHour: 1_000_000_000 } } }),
    });
    const key = ((await res.json()) as { data: { createApiKey: { key: string } } }).data.createApiKey.key;
    const op = loadOps(seeded).find((o) => o.id === 'groups20')!;
    const report: string[] = [];
    // One request first, so "after start" holds what the first request builds too.
    await fetch(`${service.url}${op.path}`, { headers: { 'x-api-key': key } });
    report.push('## After start (one request)', '', ...smaps(service.pid), ...mappings(service.pid), '');
    // HEAP_ALLOC=1: V8's sampling heap profiler over the load, every allocation (collected or not), by function and package.
    const sampler = process.env.HEAP_ALLOC === '1' ? await attachInspector(service.pid, port) : undefined;
    await sampler?.send('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const shot = await shoot(service, armRequest('rest', op, key), { connections, seconds });
    if (sampler) {
      const { profile } = await sampler.send<{ profile: { head: AllocNode } }>('HeapProfiler.stopSampling');
      sampler.close();
      report.push(...allocationSummary(profile.head, shot.ok + 1), '');
    }
    report.push(`## After the load: ${op.label}, ${connections} connections, ${seconds} s: ${Math.round(shot.rps)} req/s, ${shot.cpuMs.toFixed(2)} ms CPU per request, ${shot.bad} bad`, '');
    report.push(...smaps(service.pid), ...mappings(service.pid));
    const inspector = await attachInspector(service.pid, port);
    report.push(...describe(await inspector.memory(), 'before any GC'));
    const live = await inspector.liveMemory();
    report.push(...describe(live, 'after a full GC'), '');
    console.log(`after the load: ${Math.round(shot.rps)} req/s, heapUsed after a full GC ${mb(live.heapUsed)}, ${smaps(service.pid)[0]}`);
    if (process.env.HEAP_SNAPSHOTS !== '0') {
      // Snapshots last: taking one costs the process far more native memory than it holds.
      await snapshot(inspector, 'after-load', report);
      inspector.close();
      await service.stop();
      service = await startServer('service', [...flags, inspectFlag(port), entry], env, path.join(OUT, 'service-start.log'), node);
      await fetch(`${service.url}${op.path}`, { headers: { 'x-api-key': key } });
      const fresh = await attachInspector(service.pid, port);
      report.push('## A fresh process after start (one request)', '', ...describe(await fresh.liveMemory(), 'after a full GC'), '');
      await snapshot(fresh, 'after-start', report);
      fresh.close();
    } else inspector.close();
    fs.writeFileSync(path.join(OUT, 'heap.md'), report.join('\n'));
    console.log(`wrote ${path.relative(process.cwd(), path.join(OUT, 'heap.md'))}`);
  } finally {
    await service?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
  }
}

runMain(main);
