import 'reflect-metadata';
import net from 'node:net';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBenchDatabase, serverVersion, type BenchDatabase } from './db';
import { timeImport } from './import';
import { ARMS, armsOf, isPeer, measureLoad, VARIANT_ARMS, type Arm } from './measure';
import { loadOps, RAW_SQL, sqlOnlyOps } from './ops';
import { summarizeProfiles } from './profile';
import { compileRawServer, laterPort, runMain, startServer, type Server } from './proc';
import { attachInspector, inspectFlag } from './inspector';
import { latency, prepareNeighbours, runNeighbours } from './neighbour';
import { renderResults, replicasSection, type BenchResults, type NeighbourReport } from './report';
import { timeReplicas } from './replicas';
import { seed, type Seeded } from './seed';
import { timeSafety } from './safety';
import { currentOrder, timeBulk, timeReorder } from './singles';
import { ADMIN_TOKEN, countStatements } from './sql';
import { timeEvents, type EventsTarget } from './events';
import { timeObservability } from './observability';
import { checkPeers, checkSameJson } from './verify';
import { renderSearch, SEARCH_COMMUNITY, seedSearch, timeSearch, writeSearchSection, type SearchReport } from './search';
import { LARGE_COMMUNITY, LARGE_SIZES, seedScale, startExplainer, timeScale, type ScaleReport } from './scale';
import { node24, NODE24_VERSION, nodeVersion, preparePeer, type Peer } from './peers';

const env = (name: string, fallback: number) => Number(process.env[name] || fallback);
const settings = {
  connections: env('BENCH_CONNECTIONS', 64),
  rounds: env('BENCH_ROUNDS', 3),
  seconds: env('BENCH_SECONDS', 4),
  warmSeconds: env('BENCH_WARM_SECONDS', 1),
  // Every arm's first warm-up (on the first op, the groups page) runs this long: with 1 s the
  // service arms still sped up through the three rounds (docs/performance.md, "How it measures").
  firstWarmSeconds: env('BENCH_FIRST_WARM_SECONDS', 15),
  latencySeconds: env('BENCH_LATENCY_SECONDS', 3),
  opReps: env('BENCH_OP_REPS', 5),
  safetyReps: env('BENCH_SAFETY_REPS', 200),
  importRows: env('BENCH_IMPORT_ROWS', 100_000),
  importReps: env('BENCH_IMPORT_REPS', 1),
  importTimeoutS: env('BENCH_IMPORT_TIMEOUT_S', 90),
  neighbourSeconds: env('BENCH_NEIGHBOUR_SECONDS', 20),
  neighbourConcurrency: env('BENCH_NEIGHBOUR_CONCURRENCY', 16),
  searchMembers: env('BENCH_SEARCH_MEMBERS', 1_000_000),
  searchReps: env('BENCH_SEARCH_REPS', 200),
  scaleReps: env('BENCH_SCALE_REPS', 100),
};
/** `npm run bench -- search`: only the search section (bench/search.ts), written into bench/RESULTS.md's search block. */
const searchOnly = process.argv.slice(2).includes('search');
const arms = (process.env.BENCH_ARMS?.split(',') ?? ARMS).filter((a): a is Arm => (ARMS as readonly string[]).includes(a));
/** BENCH_ONLY=groups20,...: a partial run (e.g. to profile one route); it never overwrites RESULTS.md. */
const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
const profile = process.env.BENCH_PROFILE === '1';
/** Extra node flags for the service, e.g. BENCH_SERVICE_FLAGS="--max-semi-space-size=4" to try heap sizing. */
const serviceFlags = process.env.BENCH_SERVICE_FLAGS?.split(' ').filter(Boolean) ?? [];
const PRODUCTION_FLAGS: string[] = (JSON.parse(fs.readFileSync('package.json', 'utf8')).config?.nodeFlags ?? '').split(' ').filter(Boolean);
/**
 * The Node.js of the service, the raw server and PostGraphile 4: the bench's Node 24
 * (NODE24_VERSION, installed into .data/) by default, so that they compare like with like
 * with PostGraphile 5, which needs it; BENCH_NODE=current runs them on the Node running the bench.
 */
const benchNode = process.env.BENCH_NODE || NODE24_VERSION;
const partial = benchNode !== NODE24_VERSION || Boolean(only) || profile || arms.length < ARMS.length || serviceFlags.length > 0;
const OUT = path.resolve('.data/bench');
const PROFILE_DIR = path.join(OUT, 'profile');
const BASE = 'http://bench.invalid';

const started = Date.now();
const log = (line: string) => console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${line}`);
const notes: string[] = [];

/** `npm run build`; type errors elsewhere in the tree still emit JS, which is measured with a note. */
function build() {
  if (process.env.BENCH_SKIP_BUILD === '1') return notes.push('BENCH_SKIP_BUILD=1: measured the existing dist/');
  const res = spawnSync('npm', ['run', '-s', 'build'], { encoding: 'utf8' });
  if (res.status === 0) return;
  if (!fs.existsSync('dist/src/main.js')) throw new Error(`build failed:\n${res.stdout}${res.stderr}`);
  const errors = `${res.stdout}${res.stderr}`.split('\n').filter((l) => l.includes('error TS'));
  log(`build reported ${errors.length} type errors; measuring the emitted JS:\n${errors.slice(0, 10).join('\n')}`);
  notes.push(`\`npm run build\` reported ${errors.length} type errors (work in progress elsewhere); the JS tsc emitted was measured.`);
}

async function createKey(service: Server, communityId: string): Promise<string> {
  const res = await fetch(`${service.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({
      query: 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }',
      // A huge hourly limit: the limiter still runs its upsert per request, but never says no.
      variables: { input: { communityId, rateLimitPerHour: 1_000_000_000 } },
    }),
  });
  const body = (await res.json()) as { data: { createApiKey: { key: string } }; errors?: unknown[] };
  if (body.errors) throw new Error(`bench: createApiKey failed: ${JSON.stringify(body.errors)}`);
  return body.data.createApiKey.key;
}

/**
 * Seeds the search data into the bench database and times the filters against the first page
 * (bench/search.ts). When the scale section ran first, its community's million members (the
 * same rows: it seeds them with seedSearch) are searched instead of seeding them again.
 */
async function runSearch(service: Server, dbUrl: string, _pgVersion: string, _label: string, seededByScale?: ScaleReport): Promise<SearchReport> {
  let members = settings.searchMembers;
  let seconds: number;
  if (seededByScale) {
    members = LARGE_SIZES.members;
    seconds = seededByScale.membersSeedSeconds;
    if (members !== settings.searchMembers) notes.push(`Search ran on the scale section's ${members.toLocaleString('en')} members, not BENCH_SEARCH_MEMBERS.`);
    log(`search: the scale section's ${members} members (seeded in ${seconds.toFixed(0)} s); timing`);
  } else {
    log(`search: seeding ${members} members`);
    seconds = await seedSearch(dbUrl, members);
    log(`search: seeded in ${seconds.toFixed(0)} s; timing`);
  }
  const key = await createKey(service, SEARCH_COMMUNITY);
  const report = await timeSearch(service.url, key, dbUrl, members, seconds, settings.searchReps);
  for (const r of report.results) log(`search ${r.id}: p50 ${r.p50.toFixed(2)} ms (${r.ratio.toFixed(2)}x), ${r.matches} matching`);
  return report;
}

/**
 * The commit measured, read when the run starts: by its end the run has written RESULTS.md
 * itself (the search section), which would mark every run as having uncommitted changes.
 */
const commitMeasured = git(['rev-parse', '--short', 'HEAD']) + (git(['status', '--porcelain']) ? ' (with uncommitted changes)' : '');

function searchMeta(pgVersion: string, label: string, node: string, load: number[]) {
  return {
    date: new Date().toISOString(),
    commit: commitMeasured,
    database: `PostgreSQL ${pgVersion}, ${label}`,
    node,
    load,
  };
}

/** The search section alone: its own database, the service on the Node running the bench. */
async function mainSearch() {
  fs.mkdirSync(OUT, { recursive: true });
  const loadStart = os.loadavg();
  log('building');
  build();
  let db: BenchDatabase | undefined;
  let service: Server | undefined;
  try {
    db = await openBenchDatabase();
    const pgVersion = await serverVersion(db.url).catch(() => 'unknown');
    const serviceEnv = { DATABASE_URL: db.url, PUBLIC_BASE_URL: BASE, LOG_LEVEL: 'warn', NODE_ENV: 'production', ADMIN_TOKEN, SECRET_ENCRYPTION_KEYS: randomBytes(32).toString('base64') };
    service = await startServer('service', [...PRODUCTION_FLAGS, 'dist/src/main.js'], serviceEnv, path.join(OUT, 'service-search.log'), process.execPath);
    const report = await runSearch(service, db.url, pgVersion, db.label);
    const target = path.resolve('bench/RESULTS.md');
    writeSearchSection(target, renderSearch(report, searchMeta(pgVersion, db.label, process.version, loadStart)));
    log(`wrote the search section of ${path.relative(process.cwd(), target)}`);
  } finally {
    await service?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
  }
}

async function main() {
  if (searchOnly) return mainSearch();
  fs.mkdirSync(OUT, { recursive: true });
  const loadStart = os.loadavg();
  log('building');
  build();
  if (only?.length === 1 && only[0] === 'replicas') {
    // The replica section alone (it brings its own primary and standby): RESULTS-replicas.md.
    const replicas = await replicaSection();
    const file = path.join(OUT, 'RESULTS-replicas.md');
    fs.writeFileSync(file, [`Run ${new Date().toISOString()}, commit ${git(['rev-parse', '--short', 'HEAD'])}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}).`, '', ...replicasSection(replicas)].join('\n'));
    log(`wrote ${path.relative(process.cwd(), file)}`);
    return;
  }
  let db: BenchDatabase | undefined;
  const servers: Server[] = [];
  const cleanup = async () => {
    for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    db = await openBenchDatabase();
    const pgVersion = await serverVersion(db.url).catch(() => 'unknown');
    log(`database ${db.label}; seeding`);
    const seeded = await seed(db.url);
    log(`seeded in ${seeded.seconds.toFixed(1)} s`);
    // The events bench runs a second service over a copy of the seeded database (bench/events.ts).
    const twinUrl = !only || only.includes('events') ? await db.twin().catch(() => undefined) : undefined;
    const ops = loadOps(seeded).filter((op) => !only || only.includes(op.id));
    log('counting SQL per request in process');
    const sql = await countStatements(db.url, seeded, [...ops, ...sqlOnlyOps(seeded)], await currentOrder(db.url, seeded.bigGroupId));

    if (profile) fs.rmSync(PROFILE_DIR, { recursive: true, force: true });
    const prof = profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    const common = { DATABASE_URL: db.url, PUBLIC_BASE_URL: BASE, LOG_LEVEL: 'warn' };
    if (serviceFlags.length) notes.push(`The service ran with node flags ${serviceFlags.join(' ')} (BENCH_SERVICE_FLAGS).`);
    // Production mode as `npm run start:prod` runs it: the same node flags (package.json config.nodeFlags).
    notes.push(`The service ran with the production node flags: ${PRODUCTION_FLAGS.join(' ') || 'none'}.`);
    const serviceNode = benchNode === 'current' ? process.execPath : benchNode === NODE24_VERSION ? node24() : fail(`BENCH_NODE must be ${NODE24_VERSION} or current`);
    const nodes: Partial<Record<Arm, string>> = {};
    // Private networks allowed: the events bench delivers webhooks to a receiver on 127.0.0.1.
    // Production with DATABASE_URL needs encryption keys (docs/security.md): one made for this run.
    const SECRET_ENCRYPTION_KEYS = randomBytes(32).toString('base64');
    const serviceEnv = { ...common, NODE_ENV: 'production', ADMIN_TOKEN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SECRET_ENCRYPTION_KEYS };
    const serviceArgs = [...PRODUCTION_FLAGS, ...serviceFlags, 'dist/src/main.js'];
    // The inspector's port is only configured: nothing listens until the live heap is read after the load (bench/inspector.ts).
    const inspectPorts: Partial<Record<Arm, number>> = { rest: await laterPort() };
    const service = await startServer('service', [...prof, inspectFlag(inspectPorts.rest!), ...serviceArgs], serviceEnv, path.join(OUT, 'service.log'), serviceNode);
    servers.push(service);
    const raw = await startServer('raw', [compileRawServer(OUT)], { ...common, NODE_ENV: 'production' }, path.join(OUT, 'raw.log'), serviceNode);
    servers.push(raw);
    nodes.rest = nodes.graphql = nodes.raw = nodeVersion(serviceNode);
    log(`service pid ${service.pid}${profile ? ' (profiling)' : ''}, raw pid ${raw.pid}, on Node ${nodes.rest}`);
    const key = await createKey(service, seeded.communityId);
    notes.push(...(await checkSameJson(service.url, raw.url, key, ops)));
    const bootPeakMb = service.memory().peakMb;

    const armServers: Partial<Record<Arm, Server>> = { rest: service, graphql: service, raw };
    // Variants of the service (measure.ts VARIANT_ARMS): what the heap flags and the rate-limit store cost, in the same rounds.
    // Heap flags: the sizes and the young generation's collector (what `uncapped` leaves to Node's defaults).
    const heapFlag = /^--(max-old-space-size=|max-semi-space-size=|min-semi-space-size=|(no-)?minor-ms$)/;
    const redisUrl = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
    // A variant with its rate limits in Redis, or why it did not run.
    const inRedis = async (env: Record<string, string>, note: string) =>
      (await reachable(redisUrl))
        ? { flags: [...PRODUCTION_FLAGS, ...serviceFlags], env: { ...env, REDIS_URL: redisUrl }, note }
        : `not run: no Redis answered at ${redisUrl} (BENCH_REDIS_URL)`;
    const variants: Record<(typeof VARIANT_ARMS)[number], () => Promise<{ flags: string[]; env: Record<string, string>; note: string } | string>> = {
      uncapped: async () => {
        const flags = [...PRODUCTION_FLAGS, ...serviceFlags].filter((f) => !heapFlag.test(f));
        return { flags, env: {}, note: `node flags ${flags.join(' ') || 'none'} (no heap flags)` };
      },
      redis: () => inRedis({}, `REDIS_URL=${redisUrl} (rate limits in Redis)`),
      nojit: async () => ({ flags: [...PRODUCTION_FLAGS, ...serviceFlags], env: { GRAPHQL_JIT: 'false' }, note: 'GRAPHQL_JIT=false (route documents on graphql-js execute)' }),
      norls: async () => ({ flags: [...PRODUCTION_FLAGS, ...serviceFlags], env: { DB_ROW_SECURITY: 'off' }, note: 'DB_ROW_SECURITY=off (requests not held to their community by the database)' }),
      plain: () =>
        inRedis({ DB_ROW_SECURITY: 'off' }, `DB_ROW_SECURITY=off and REDIS_URL=${redisUrl} (PostgreSQL does the page alone: no tenancy settings or policies, no rate-limit count)`),
    };
    for (const arm of VARIANT_ARMS) {
      if (!arms.includes(arm) || !ops.some((op) => armsOf(op, [arm]).length)) continue;
      const how = await variants[arm]();
      if (typeof how === 'string') {
        notes.push(`The arm \`${arm}\` was ${how}.`);
        continue;
      }
      // The service's own environment: its job worker runs here too (webhook deliveries to the bench's local receiver).
      if (arm === 'uncapped') inspectPorts.uncapped = await laterPort();
      const inspect = inspectPorts[arm] ? [inspectFlag(inspectPorts[arm])] : [];
      const server = await startServer(arm, [...inspect, ...how.flags, 'dist/src/main.js'], { ...serviceEnv, ...how.env }, path.join(OUT, `${arm}.log`), serviceNode);
      servers.push(server);
      armServers[arm] = server;
      nodes[arm] = nodes.rest;
      notes.push(`The arm \`${arm}\` is the REST route of a second service process with ${how.note}.`);
    }
    // The peers: PostGraphile 4 on the service's Node, PostGraphile 5 on Node 24 (it needs 22 or later).
    const peerArms = arms.filter((a) => isPeer(a) && ops.some((op) => op.peer)) as Peer[];
    for (const peer of peerArms) {
      log(`preparing ${peer}`);
      const node = peer === 'postgraphile5' ? node24() : serviceNode;
      const server = await startServer(peer, [preparePeer(peer)], { DATABASE_URL: db.url, PEER: peer, NODE_ENV: 'production' }, path.join(OUT, `${peer}.log`), node);
      servers.push(server);
      armServers[peer] = server;
      nodes[peer] = nodeVersion(node);
      log(`${peer} pid ${server.pid} on Node ${nodes[peer]}`);
    }
    notes.push(...(await checkPeers(service.url, peerArms.map((arm) => ({ arm, url: armServers[arm]!.url })), key, ops)));

    const load = await measureLoad(armServers, key, ops, { ...settings, arms: arms.filter((a) => armServers[a]), dbCpu: db.cpuMs }, log);
    const memory: BenchResults['memory'] = { service: { ...service.memory(), bootPeakMb }, raw: raw.memory() };
    for (const peer of peerArms) memory[peer] = armServers[peer]!.memory();
    for (const arm of VARIANT_ARMS) if (armServers[arm]) memory[arm] = armServers[arm]!.memory();
    // Live heap: a full GC, then heapUsed, read after every peak above (the collection lowers RSS, never VmHWM).
    memory.service.liveHeapMb = await liveHeapMb(service, inspectPorts.rest!);
    if (armServers.uncapped) memory.uncapped!.liveHeapMb = await liveHeapMb(armServers.uncapped, inspectPorts.uncapped!);
    log(`memory: service peak ${Math.round(memory.service.peakMb)} MB (after start ${Math.round(bootPeakMb)} MB), live heap ${memory.service.liveHeapMb.toFixed(1)} MB` +
      (memory.uncapped ? `; uncapped peak ${Math.round(memory.uncapped.peakMb)} MB, live heap ${memory.uncapped.liveHeapMb?.toFixed(1)} MB` : ''));
    for (const arm of VARIANT_ARMS) {
      if (!armServers[arm]) continue;
      await armServers[arm]!.stop(); // measured: the rest of the run has the machine without it
      servers.splice(servers.indexOf(armServers[arm]!), 1);
    }

    let observability: BenchResults['observability'];
    if (!only || only.includes('observability')) {
      log('observability: groups page with metrics, with tracing (10% sampled), with both off');
      observability = await timeObservability({
        args: serviceArgs,
        env: serviceEnv,
        node: serviceNode,
        logDir: OUT,
        key,
        forks: env('BENCH_OBS_FORKS', 4),
        // Many short rounds: the machine's own speed moves from one second to the next, so a
        // ratio of two rounds seconds apart carries that (bench/observability.ts).
        rounds: env('BENCH_OBS_ROUNDS', 15),
        seconds: env('BENCH_OBS_SECONDS', 1),
        // Fresh processes: a second of warm-up left them compiling through the rounds (each
        // round faster than the last, tracing's share falling from 39% to 8% in one run); after
        // 8 s, on a machine serving ~1,000 requests a second, the first round was still 10-28%
        // dearer than the second in all 15 processes of one run (docs/operations.md).
        warmSeconds: env('BENCH_OBS_WARM_SECONDS', 16),
        connections: settings.connections,
        log,
        profileDir: profile ? PROFILE_DIR : undefined,
      });
      if (profile) for (const { id } of observability.arms) fs.writeFileSync(path.join(OUT, `profile-obs-${id}.txt`), summarizeProfiles(path.join(PROFILE_DIR, `obs-${id}`), 60));
      log(`observability: ${observability.arms.map((a) => `${a.id} ${Math.round(a.rpsMedian)}/s (${a.vsOff.toFixed(3)}), ${a.cpuMs.toFixed(3)} ms CPU (${a.cpuVsOff.toFixed(3)})`).join(', ')}`);
    }

    const singles = [];
    if (!only || only.includes('bulk')) singles.push(await timeBulk(service.url, key, seeded, settings.opReps));
    if (!only || only.includes('reorder')) singles.push(await timeReorder(service.url, key, seeded, settings.opReps, db.url));
    if (!only || only.includes('import')) {
      log(`importing ${settings.importRows} members`);
      singles.push(await timeImport(service.url, key, settings.importRows, settings.importReps, settings.importTimeoutS * 1000));
    }
    let events: BenchResults['events'];
    if (!only || only.includes('events')) {
      log('events: outbox on/off, webhook delivery rate');
      const twinServer = twinUrl ? await startServer('service-twin', serviceArgs, { ...serviceEnv, DATABASE_URL: twinUrl }, path.join(OUT, 'service-twin.log'), serviceNode) : undefined;
      if (twinServer) servers.push(twinServer);
      const twin: EventsTarget | undefined = twinServer && { url: twinServer.url, key: await createKey(twinServer, seeded.communityId), dbUrl: twinUrl! };
      events = await timeEvents({ url: service.url, key, dbUrl: db.url }, twin, seeded, env('BENCH_EVENTS_GROUP_REPS', 100), env('BENCH_EVENTS_BULK_REPS', 10));
      if (twinServer) {
        await twinServer.stop(); // measured: the rest of the run has the machine without it
        servers.splice(servers.indexOf(twinServer), 1);
      }
      log(`events: POST /groups ${events.groupPost.onMedian.toFixed(2)} vs ${events.groupPost.offMedian.toFixed(2)} ms (paired ${(events.groupPost.pairedOverhead * 100).toFixed(1)}%); bulk ${Math.round(events.bulk.onMedian)} vs ${Math.round(events.bulk.offMedian)} ms (paired ${(events.bulk.pairedOverhead * 100).toFixed(1)}%); in PostgreSQL ${Math.round(events.inDatabase?.groupPostUs ?? NaN)} us / ${((events.inDatabase?.bulkUs ?? NaN) / 1000).toFixed(1)} ms; delivery ${events.delivery.perSecond.toFixed(0)}/s`);
    }
    for (const t of singles) log(`${t.id}: REST ${t.rest.map(Math.round).join(', ')} ms; GraphQL ${t.graphql.map(Math.round).join(', ')} ms ${t.note ?? ''}`);
    const safety = !only || only.includes('safety') ? await timeSafety(service.url, key, seeded, settings.safetyReps) : [];
    for (const c of safety) log(`${c.label}: ${c.withLabel} ${c.withMedian.toFixed(2)} ms, ${c.withoutLabel} ${c.withoutMedian.toFixed(2)} ms (${c.ratio.toFixed(2)}x)`);
    memory.serviceAfterSingles = { peakMb: service.memory().peakMb };
    const replicas = !only || only.includes('replicas') ? await replicaSection() : undefined;
    let neighbour: NeighbourReport | undefined;
    if (!only || only.includes('neighbour')) {
      log(`noisy neighbour: ${settings.neighbourSeconds} s quiet, ${settings.neighbourSeconds} s under attack at concurrency ${settings.neighbourConcurrency}`);
      neighbour = await measureNeighbour(service.url, settings.neighbourSeconds, settings.neighbourConcurrency);
      log(`neighbour B p50/p99 quiet ${neighbour.quiet.p50.toFixed(1)}/${neighbour.quiet.p99.toFixed(1)} ms, attacked ${neighbour.attacked.p50.toFixed(1)}/${neighbour.attacked.p99.toFixed(1)} ms`);
    }
    let scale: ScaleReport | undefined;
    if (!only || only.includes('scale')) scale = await runScale(service, db.url, seeded, key);
    let search: SearchReport | undefined;
    if (!only || only.includes('search')) search = await runSearch(service, db.url, pgVersion, db.label, scale);
    await cleanup();

    const results: BenchResults = {
      meta: {
        date: new Date().toISOString(),
        commit: commitMeasured,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        cores: os.cpus().length,
        memoryGb: os.totalmem() / 2 ** 30,
        node: process.version,
        nodes,
        database: `PostgreSQL ${pgVersion}, ${db.label}`,
        loadStart,
        loadEnd: os.loadavg(),
        settings: { ...settings, ...(only ? { only: only.join(',') } : {}), ...(partial ? { arms: arms.join(',') } : {}) },
        notes,
        minutes: (Date.now() - started) / 60_000,
      },
      load,
      sql,
      rawSql: RAW_SQL,
      memory,
      singles,
      safety,
      neighbour,
      events,
      observability,
      replicas,
      scale,
    };
    fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify(results, null, 2));
    const target = partial ? path.join(OUT, 'RESULTS-partial.md') : path.resolve('bench/RESULTS.md');
    fs.writeFileSync(target, renderResults(results));
    if (search) writeSearchSection(target, renderSearch(search, searchMeta(pgVersion, db.label, nodes.rest ?? process.version, loadStart)));
    log(`wrote ${path.relative(process.cwd(), target)} and ${path.relative(process.cwd(), path.join(OUT, 'results.json'))}`);
    if (profile) {
      const summary = summarizeProfiles(PROFILE_DIR);
      fs.writeFileSync(path.join(OUT, 'profile-summary.txt'), summary);
      log(`profile summary: ${path.relative(process.cwd(), path.join(OUT, 'profile-summary.txt'))}`);
    }
  } finally {
    await cleanup();
  }
}

/**
 * The scale section (bench/scale.ts): the large data set in the search community (its members
 * seeded here when the search section has not run yet), then the same requests of both
 * communities, interleaved, and the EXPLAIN of each request's statements on both.
 */
async function runScale(service: Server, dbUrl: string, seeded: Seeded, smallKey: string): Promise<ScaleReport> {
  log(`scale: seeding ${LARGE_SIZES.groups} groups, ${LARGE_SIZES.members} members, ${LARGE_SIZES.memberships} memberships`);
  const large = await seedScale(dbUrl);
  log(`scale: seeded in ${(large.membersSeconds + large.seconds).toFixed(0)} s (members ${large.membersSeconds.toFixed(0)} s); timing ${settings.scaleReps} rounds`);
  const largeKey = await createKey(service, LARGE_COMMUNITY);
  const explainer = await startExplainer(dbUrl, ADMIN_TOKEN);
  try {
    const report = await timeScale(
      { url: service.url, key: smallKey, bigGroupId: seeded.bigGroupId, groupId: seeded.groupId, communityId: seeded.communityId },
      { url: service.url, key: largeKey, bigGroupId: large.bigGroupId, groupId: large.groupId, communityId: large.communityId },
      settings.scaleReps,
      (c, target) => explainer.explain(c, target),
    );
    for (const r of report.results) log(`scale ${r.id}: p50 ${r.small.p50.toFixed(2)} / ${r.large.p50.toFixed(2)} ms (${r.ratio.toFixed(2)}x, paired ${r.paired.toFixed(2)}x); buffers ${r.statements.map((s) => `${s.small.buffers}/${s.large.buffers}`).join(', ')}`);
    return { ...report, seedSeconds: large.seconds, membersSeedSeconds: large.membersSeconds };
  } finally {
    await explainer.close();
  }
}

/** Reads on a replica against the primary alone, on the service's Node with the production flags (bench/replicas.ts). */
function replicaSection() {
  const node = benchNode === 'current' ? process.execPath : node24();
  return timeReplicas(
    {
      rounds: settings.rounds,
      seconds: settings.seconds,
      connections: settings.connections,
      args: [...PRODUCTION_FLAGS, ...serviceFlags, 'dist/src/main.js'],
      node,
      outDir: OUT,
      redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
    },
    log,
  );
}

/** heapUsed after a full garbage collection, in MB, through the server's inspector (opened now by SIGUSR1). */
async function liveHeapMb(server: Server, port: number): Promise<number> {
  const inspector = await attachInspector(server.pid, port);
  try {
    return (await inspector.liveMemory()).heapUsed / 2 ** 20;
  } finally {
    inspector.close();
  }
}

/** B's latency alone, then while A attacks (bench/neighbour.ts). */
async function measureNeighbour(url: string, seconds: number, concurrency: number): Promise<NeighbourReport> {
  const n = await prepareNeighbours(url, ADMIN_TOKEN);
  const counts = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((o, r) => ({ ...o, [r.status]: (o[r.status] ?? 0) + 1 }), {});
  const quiet = await runNeighbours(n, seconds, 0);
  const attacked = await runNeighbours(n, seconds, concurrency);
  return {
    seconds,
    concurrency,
    quiet: { ...latency(quiet), statuses: counts(quiet.b) },
    attacked: { ...latency(attacked), statuses: counts(attacked.b) },
    a: attacked.a,
  };
}

/** The raw server as plain JS, so it runs on bare node like dist/ (no compiler hook in its memory). */
function fail(message: string): never {
  throw new Error(`bench: ${message}`);
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

runMain(main);

/** Whether a TCP server answers at the URL's host and port within a second. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) || 6379, timeout: 1000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}
