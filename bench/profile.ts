import fs from 'node:fs';
import path from 'node:path';

/** The parts of a V8 .cpuprofile (node --cpu-prof) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<package>, our own src/ file, or the runtime itself. */
function owner(url: string): string {
  if (!url) return '(native/V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const src = url.indexOf('/dist/src/');
  if (src >= 0) return 'src/' + url.slice(src + '/dist/src/'.length).split('/').slice(0, -1).join('/');
  if (url.startsWith('node:')) return 'node (core)';
  return url;
}

/** Coarse layers, so a profile answers "how much is the ORM, GraphQL, HTTP" at a glance. */
const LAYERS: [string, RegExp][] = [
  ['ORM (MikroORM, knex, tarn)', /^(@mikro-orm\/|knex$|tarn$)/],
  ['GraphQL (graphql-js, type-graphql, scalars, Apollo, DataLoader)', /^(graphql|type-graphql|graphql-scalars|@apollo\/|@graphql-tools\/|dataloader)/],
  ['pg driver', /^(pg|pg-protocol|pg-pool|pg-types|postgres-.*)$/],
  ['HTTP (express, router, middleware)', /^(express|router|body-parser|raw-body|helmet|cors|etag|parseurl|content-type|mime-types|vary|on-finished|fresh|send|finalhandler|accepts|type-is|negotiator|qs|cookie|depd|statuses|encodeurl|escape-html|proxy-addr|forwarded)$/],
  ['rate limiter', /^rate-limiter-flexible$/],
  ['our code (src/)', /^src\//],
  ['garbage collector', /^\(garbage collector\)$/],
];
const layerOf = (pkg: string) => LAYERS.find(([, re]) => re.test(pkg))?.[0] ?? (isRuntime(pkg) ? 'runtime, unattributed' : `other: ${pkg}`);

const isRuntime = (pkg: string) => pkg === '(native/V8)' || pkg === 'node (core)' || pkg.startsWith('node:');

const label = (f: CpuProfile['nodes'][number]['callFrame']) =>
  `${f.functionName || '(anonymous)'} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''}`.trim();

function top(map: Map<string, number>, total: number, n: number): string[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
}

/**
 * Self time by package and by function, and inclusive time by function (each sample
 * counted once per function on its stack), from the profiles in `dir`.
 */
export function summarizeProfiles(dir: string, n = 30): string {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  if (!files.length) return `no .cpuprofile in ${dir}`;
  const selfByPkg = new Map<string, number>();
  const selfByFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const attributed = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const file of files) {
    const prof = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(prof.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of prof.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    prof.samples.forEach((id, i) => {
      const us = prof.timeDeltas[i] ?? 0;
      const node = byId.get(id)!;
      const name = node.callFrame.functionName;
      if (name === '(idle)' || name === '(program)') {
        if (name === '(idle)') idle += us;
        return;
      }
      total += us;
      const pkg = name === '(garbage collector)' ? '(garbage collector)' : owner(node.callFrame.url);
      selfByPkg.set(pkg, (selfByPkg.get(pkg) ?? 0) + us);
      const fn = `${label(node.callFrame)} [${pkg}]`;
      selfByFn.set(fn, (selfByFn.get(fn) ?? 0) + us);
      // Runtime and native frames (socket writes, JSON, microtasks) are charged to the nearest library or src/ caller.
      let charged = pkg;
      for (let cur: number | undefined = id; cur !== undefined && isRuntime(charged); cur = parent.get(cur)) {
        charged = owner(byId.get(cur)!.callFrame.url);
      }
      if (name === '(garbage collector)') charged = name;
      attributed.set(charged, (attributed.get(charged) ?? 0) + us);
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const frame = byId.get(cur)!.callFrame;
        const key = `${label(frame)} [${owner(frame.url)}]`;
        if (seen.has(key) || frame.functionName === '(root)') continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      }
    });
  }
  return [
    `profiles: ${files.join(', ')}`,
    `busy ${(total / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s (percentages are of busy time)`,
    '',
    '## Time by layer (as below: runtime and native frames charged to their caller)',
    ...top(regroup(attributed), total, n),
    '',
    '## Self time by package',
    ...top(selfByPkg, total, n),
    '',
    '## Time by package, runtime and native frames charged to their nearest library or src/ caller',
    ...top(attributed, total, n),
    '',
    '## Self time by function',
    ...top(selfByFn, total, n),
    '',
    '## Inclusive time by function',
    ...top(inclusive, total, n * 2),
  ].join('\n');
}

function regroup(byPkg: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [pkg, us] of byPkg) out.set(layerOf(pkg), (out.get(layerOf(pkg)) ?? 0) + us);
  return out;
}

if (require.main === module) {
  console.log(summarizeProfiles(process.argv[2] ?? '.data/bench/profile'));
}
