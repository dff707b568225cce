import fs from 'node:fs';

/**
 * Summarises a V8 heap snapshot (.heapsnapshot, JSON) by what holds the memory: retained
 * sizes over the dominator tree (weak edges ignored, as DevTools does), grouped by
 * constructor, by the package whose module-level scope holds them, by the package whose
 * code (functions, bytecode, source text) they are, and the largest single retainers with
 * their dominator chain. `node -r @swc-node/register bench/heap-summary.ts <file> [top]`;
 * bench/heap.ts takes the snapshots.
 */

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapSummary {
  totalMb: number;
  nodes: number;
  lines: string[];
}

const mb = (b: number) => (b / 2 ** 20).toFixed(2).padStart(7);

/** `node_modules/<pkg>` (or `@scope/pkg`) of a script path, `app:<dir>` for the service's own files, else the path's tail. */
export function packageOf(file: string): string {
  const i = file.lastIndexOf('node_modules/');
  if (i >= 0) {
    const parts = file.slice(i + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const d = file.indexOf('/dist/src/');
  if (d >= 0) return `app:${file.slice(d + '/dist/'.length).split('/').slice(0, 2).join('/')}`;
  const s = file.indexOf('/src/');
  if (s >= 0) return `app:${file.slice(s + 1).split('/').slice(0, 2).join('/')}`;
  if (file.startsWith('node:')) return 'node (built-in)';
  return file ? file.split('/').slice(-2).join('/') : '(no script)';
}

export function summarize(file: string, top = 25): HeapSummary {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const meta = snap.snapshot.meta;
  const NF = meta.node_fields.length;
  const EF = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSelf = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const WEAK = edgeTypes.indexOf('weak');
  const SHORTCUT = edgeTypes.indexOf('shortcut');
  const ELEMENT = edgeTypes.indexOf('element');
  const HIDDEN = edgeTypes.indexOf('hidden');
  const N = snap.nodes.length / NF;
  const { nodes, edges, strings } = snap;

  const firstEdge = new Uint32Array(N + 1);
  for (let i = 0, e = 0; i < N; i++) {
    firstEdge[i] = e;
    e += nodes[i * NF + nEdges] * EF;
    firstEdge[i + 1] = e;
  }
  const self = (i: number) => nodes[i * NF + nSelf];
  const typeOf = (i: number) => nodeTypes[nodes[i * NF + nType]];
  const nameOf = (i: number) => strings[nodes[i * NF + nName]];
  const edgeName = (e: number) => {
    const t = edges[e + eType];
    return t === ELEMENT || t === HIDDEN ? `[${edges[e + eName]}]` : strings[edges[e + eName]];
  };
  const strong = (e: number) => edges[e + eType] !== WEAK && edges[e + eType] !== SHORTCUT;

  // Dominators: Lengauer-Tarjan (simple version, path compression), iterative DFS from the root (node 0).
  const UNSEEN = 0xffffffff;
  const semi = new Uint32Array(N).fill(UNSEEN);
  const vertex = new Uint32Array(N);
  const parent = new Uint32Array(N);
  let count = 0;
  {
    const stack = new Uint32Array(N + 1);
    const cursor = new Uint32Array(N);
    let sp = 0;
    stack[sp++] = 0;
    semi[0] = count;
    vertex[count++] = 0;
    cursor[0] = firstEdge[0];
    while (sp) {
      const v = stack[sp - 1];
      if (cursor[v] >= firstEdge[v + 1]) {
        sp--;
        continue;
      }
      const e = cursor[v];
      cursor[v] += EF;
      if (!strong(e)) continue;
      const w = edges[e + eTo] / NF;
      if (semi[w] !== UNSEEN) continue;
      semi[w] = count;
      vertex[count++] = w;
      parent[w] = v;
      cursor[w] = firstEdge[w];
      stack[sp++] = w;
    }
  }
  // Predecessors (strong edges between reached nodes), as CSR.
  const predCount = new Uint32Array(N + 1);
  for (let v = 0; v < N; v++) {
    if (semi[v] === UNSEEN) continue;
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (strong(e)) predCount[edges[e + eTo] / NF + 1]++;
  }
  for (let i = 0; i < N; i++) predCount[i + 1] += predCount[i];
  const preds = new Uint32Array(predCount[N]);
  const fill = predCount.slice(0, N);
  for (let v = 0; v < N; v++) {
    if (semi[v] === UNSEEN) continue;
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (strong(e)) preds[fill[edges[e + eTo] / NF]++] = v;
  }
  const ancestor = new Uint32Array(N).fill(UNSEEN);
  const label = new Uint32Array(N);
  for (let i = 0; i < N; i++) label[i] = i;
  const idom = new Uint32Array(N);
  const bucketHead = new Uint32Array(N).fill(UNSEEN);
  const bucketNext = new Uint32Array(N).fill(UNSEEN);
  const pathStack = new Uint32Array(N);
  const compress = (v: number) => {
    let sp = 0;
    let u = v;
    while (ancestor[ancestor[u]] !== UNSEEN) {
      pathStack[sp++] = u;
      u = ancestor[u];
    }
    while (sp) {
      const x = pathStack[--sp];
      const a = ancestor[x];
      if (semi[label[a]] < semi[label[x]]) label[x] = label[a];
      ancestor[x] = ancestor[a];
    }
  };
  const evalNode = (v: number) => {
    if (ancestor[v] === UNSEEN) return v;
    compress(v);
    return label[v];
  };
  for (let i = count - 1; i > 0; i--) {
    const w = vertex[i];
    for (let p = predCount[w]; p < predCount[w + 1]; p++) {
      const u = evalNode(preds[p]);
      if (semi[u] < semi[w]) semi[w] = semi[u];
    }
    const s = vertex[semi[w]];
    bucketNext[w] = bucketHead[s];
    bucketHead[s] = w;
    const pw = parent[w];
    ancestor[w] = pw;
    for (let v = bucketHead[pw]; v !== UNSEEN; v = bucketNext[v]) {
      const u = evalNode(v);
      idom[v] = semi[u] < semi[v] ? u : pw;
    }
    bucketHead[pw] = UNSEEN;
  }
  for (let i = 1; i < count; i++) {
    const w = vertex[i];
    if (idom[w] !== vertex[semi[w]]) idom[w] = idom[idom[w]];
  }
  idom[0] = 0;
  const retained = new Float64Array(N);
  for (let i = count - 1; i >= 0; i--) {
    const w = vertex[i];
    retained[w] += self(w);
    if (i) retained[idom[w]] += retained[w];
  }
  const total = retained[0];

  // Scripts: closure -> shared -> script -> name; a closure's context is its module scope (or an inner scope).
  const edgeTo = (v: number, name: string) => {
    for (let e = firstEdge[v]; e < firstEdge[v + 1]; e += EF) if (strings[edges[e + eName]] === name && edges[e + eType] !== ELEMENT) return edges[e + eTo] / NF;
    return -1;
  };
  const scriptName = new Map<number, string>();
  const scriptOf = (sfi: number): string => {
    const script = sfi >= 0 ? (edgeTo(sfi, 'script') >= 0 ? edgeTo(sfi, 'script') : edgeTo(sfi, 'script_or_debug_info')) : -1;
    if (script < 0) return '';
    let name = scriptName.get(script);
    if (name === undefined) {
      const n = edgeTo(script, 'name');
      name = n >= 0 && typeOf(n) === 'string' ? nameOf(n) : '';
      scriptName.set(script, name);
    }
    return name;
  };
  const byPackageScope = new Map<string, number>();
  const byPackageCode = new Map<string, number>();
  const contextPkg = new Map<number, string>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (let v = 0; v < N; v++) {
    if (semi[v] === UNSEEN) continue;
    const t = typeOf(v);
    if (t === 'closure') {
      const pkg = packageOf(scriptOf(edgeTo(v, 'shared')));
      const ctx = edgeTo(v, 'context');
      if (ctx >= 0 && !contextPkg.has(ctx)) contextPkg.set(ctx, pkg);
    } else if (t === 'code' && edgeTo(v, 'source') >= 0) {
      // A script: its source text and line ends (its functions are counted below).
      const n = edgeTo(v, 'name');
      add(byPackageCode, packageOf(n >= 0 && typeOf(n) === 'string' ? nameOf(n) : ''), retained[v]);
    } else if (t === 'code' && (edgeTo(v, 'script') >= 0 || edgeTo(v, 'script_or_debug_info') >= 0)) {
      // A function's shared info: bytecode, scope info, feedback metadata, compiled code.
      add(byPackageCode, packageOf(scriptOf(v)), retained[v]);
    }
  }
  // A context's retained size once, under the package whose closures hold it (outermost first: skip contexts dominated by another counted one).
  const counted = new Uint8Array(N);
  for (const ctx of contextPkg.keys()) counted[ctx] = 1;
  for (const [ctx, pkg] of contextPkg) {
    let d = idom[ctx];
    let inner = false;
    while (d !== 0) {
      if (counted[d]) {
        inner = true;
        break;
      }
      d = idom[d];
    }
    if (!inner) add(byPackageScope, pkg, retained[ctx]);
  }

  // Everything, partitioned: each node belongs to the package of its nearest dominator that names
  // one (a script, a function, a module scope its closures hold, a CommonJS Module object).
  const pkgNames: string[] = ['(held by no package: runtime, roots, shared)'];
  const pkgIndex = new Map<string, number>();
  const tag = new Int32Array(N).fill(-1);
  const tagAs = (v: number, pkg: string) => {
    if (v < 0 || tag[v] >= 0) return;
    let i = pkgIndex.get(pkg);
    if (i === undefined) pkgIndex.set(pkg, (i = pkgNames.push(pkg) - 1));
    tag[v] = i;
  };
  for (let v = 0; v < N; v++) {
    if (semi[v] === UNSEEN) continue;
    const t = typeOf(v);
    if (t === 'closure') {
      const pkg = packageOf(scriptOf(edgeTo(v, 'shared')));
      tagAs(v, pkg);
      tagAs(edgeTo(v, 'context'), pkg);
    } else if (t === 'code' && edgeTo(v, 'source') >= 0) {
      const n = edgeTo(v, 'name');
      tagAs(v, packageOf(n >= 0 && typeOf(n) === 'string' ? nameOf(n) : ''));
    } else if (t === 'code' && (edgeTo(v, 'script') >= 0 || edgeTo(v, 'script_or_debug_info') >= 0)) {
      tagAs(v, packageOf(scriptOf(v)));
    } else if (t === 'object' && nameOf(v) === 'Module') {
      const f = edgeTo(v, 'filename');
      if (f >= 0 && typeOf(f) === 'string') tagAs(v, packageOf(nameOf(f)));
    }
  }
  const owner = new Int32Array(N);
  const byOwner = new Float64Array(pkgNames.length);
  for (let i = 0; i < count; i++) {
    const w = vertex[i];
    owner[w] = tag[w] >= 0 ? tag[w] : i ? owner[idom[w]] : 0;
    byOwner[owner[w]] += self(w);
  }

  const ctorOf = (v: number) => {
    const t = typeOf(v);
    return t === 'object' || t === 'closure' || t === 'native' || t === 'hidden' || t === 'synthetic' ? `${nameOf(v).slice(0, 60)}` : `(${t})`;
  };
  const byCtor = new Map<string, { count: number; self: number }>();
  for (let v = 0; v < N; v++) {
    if (semi[v] === UNSEEN) continue;
    const k = ctorOf(v);
    const c = byCtor.get(k) ?? { count: 0, self: 0 };
    c.count++;
    c.self += self(v);
    byCtor.set(k, c);
  }

  // The largest retainers that are not simply an ancestor's bulk: nodes whose retained size is
  // over 0.5% of the heap and most of whose size is not in a single child.
  const children = new Map<number, number[]>();
  for (let i = 1; i < count; i++) {
    const w = vertex[i];
    const d = idom[w];
    if (retained[w] > total * 0.005) (children.get(d) ?? children.set(d, []).get(d)!).push(w);
  }
  const chain = (v: number) => {
    const names: string[] = [];
    for (let d = idom[v], k = 0; d !== 0 && k < 5; d = idom[d], k++) names.push(`${ctorOf(d)}`);
    return names.join(' < ');
  };
  const via = (v: number) => {
    // The name of an edge from the immediate dominator to v, when one exists.
    const d = idom[v];
    for (let e = firstEdge[d]; e < firstEdge[d + 1]; e += EF) if (edges[e + eTo] / NF === v) return edgeName(e);
    return '';
  };
  const leaves: number[] = [];
  for (let i = 1; i < count; i++) {
    const w = vertex[i];
    if (retained[w] <= total * 0.005) continue;
    const kids = children.get(w) ?? [];
    const biggest = kids.reduce((m, k) => Math.max(m, retained[k]), 0);
    if (biggest < retained[w] * 0.5) leaves.push(w);
  }
  leaves.sort((a, b) => retained[b] - retained[a]);

  const lines: string[] = [];
  lines.push(`${file}: ${N.toLocaleString('en')} nodes, ${mb(total).trim()} MB reachable`);
  lines.push('', `By constructor (self size, top ${top}):`);
  for (const [k, c] of [...byCtor].sort((a, b) => b[1].self - a[1].self).slice(0, top)) lines.push(`${mb(c.self)} MB ${String(c.count).padStart(8)}  ${k}`);
  lines.push('', `By package, everything (each object under its nearest dominator that names a package, top ${top}):`);
  for (const i of [...byOwner.keys()].sort((a, b) => byOwner[b] - byOwner[a]).slice(0, top)) lines.push(`${mb(byOwner[i])} MB  ${pkgNames[i]}`);
  const unowned = new Map<string, number>();
  for (let i = 0; i < count; i++) if (owner[vertex[i]] === 0) add(unowned, ctorOf(vertex[i]), self(vertex[i]));
  lines.push(`  of which held by no package: ${[...unowned].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${mb(v).trim()} MB`).join(', ')}`);
  lines.push('', `By package, module-level scope (retained by the contexts its closures hold, top ${top}):`);
  for (const [k, v] of [...byPackageScope].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${mb(v)} MB  ${k}`);
  lines.push('', `By package, code (scripts' source, functions' bytecode and metadata, top ${top}):`);
  for (const [k, v] of [...byPackageCode].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`${mb(v)} MB  ${k}`);
  lines.push('', `Largest retainers (over 0.5% of the heap; retained, self, edge from the dominator, dominator chain):`);
  for (const v of leaves.slice(0, top * 2)) lines.push(`${mb(retained[v])} MB ${mb(self(v))}  ${ctorOf(v)} .${via(v)}  < ${chain(v)}`);
  return { totalMb: total / 2 ** 20, nodes: N, lines };
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node -r @swc-node/register bench/heap-summary.ts <file.heapsnapshot> [top]');
    process.exit(2);
  }
  console.log(summarize(file, Number(top) || 25).lines.join('\n'));
}
