import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { transformFileSync } from '@swc/core';

/** A local OTLP/HTTP receiver: counts the export requests and bytes it gets, answers 200, keeps nothing. */
export interface OtlpSink {
  url: string;
  exported: { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function otlpSink(): Promise<OtlpSink> {
  const exported = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (exported.bytes += c.length));
    req.on('end', () => {
      exported.requests++;
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exported, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Fetches `url` once a second, as Prometheus scrapes (its default is every 15 s): stop it with clearInterval. */
export const scrapeEverySecond = (url: string): NodeJS.Timeout =>
  setInterval(() => void fetch(url).then((r) => r.text()).catch(() => undefined), 1000);

/** A server process under test; CPU and memory are read from /proc, so they are the server's alone. */
export interface Server {
  name: string;
  pid: number;
  url: string;
  /** utime + stime of every thread so far, in ms (clock ticks of 10 ms on Linux). */
  cpuMs(): number;
  /** VmHWM (peak resident set) and VmRSS, in MB. */
  memory(): { peakMb: number; rssMb: number };
  stop(): Promise<void>;
}

const TICK_MS = 1000 / 100; // CLK_TCK is 100 on Linux x86-64

/** Listens on `port` of 127.0.0.1 (0: any free one) and closes again: the port it got, or undefined when it was taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const got = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(got));
    });
  });
}

export async function freePort(): Promise<number> {
  const port = await probePort(0);
  if (port === undefined) throw new Error('bench: no free port');
  return port;
}

/**
 * A port to listen on minutes from now (a V8 inspector opened by SIGUSR1 after the load): below
 * Linux's ephemeral range (32768-60999), which the load generator's own connections draw from.
 * A free port from that range (`freePort`) was taken by one of them before the inspector opened,
 * and the full run stopped ("address already in use", 2026-11-29).
 */
export async function laterPort(): Promise<number> {
  for (;;) {
    const port = await probePort(20_000 + Math.floor(Math.random() * 12_000));
    if (port !== undefined) return port;
  }
}

/** utime + stime from a /proc stat file (a process's or one thread's), in ms. */
function statCpuMs(file: string): number {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const stat = fs.readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

const cpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`);

/** CPU ms by thread name (/proc/<pid>/task/<tid>/comm): the main thread's share against V8's and libuv's workers. */
export function threadCpuMs(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[name] = (out[name] ?? 0) + statCpuMs(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

function memory(pid: number) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peakMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

async function waitReady(url: string, child: ChildProcess, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) before it was ready:\n${output()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not ready after ${timeoutMs} ms:\n${output()}`);
}

/**
 * Starts `node ...args` with `env` on a free port and waits for GET /health; its output goes to `logFile`.
 * `node`: the binary (default: the one running the bench).
 */
export async function startServer(name: string, args: string[], env: Record<string, string>, logFile: string, node = process.execPath): Promise<Server> {
  const port = await freePort();
  // Its folder first: without it the stream's error would end the bench and leave the child running.
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const logStream = fs.createWriteStream(logFile);
  const child = spawn(node, args, {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000); // the tail, for error messages
    logStream.write(chunk); // all of it, to see what a server logged under load
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, child, () => log);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const pid = child.pid!;
  return {
    name,
    pid,
    url,
    cpuMs: () => cpuMs(pid),
    memory: () => memory(pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        // SIGTERM: a graceful exit, so --cpu-prof gets to write its profile.
        const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** A bench script's entry: exit 0 when `main` resolves, else print the error and exit 1. */
export function runMain(main: () => Promise<unknown>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** A bench script (TypeScript) compiled to CommonJS at `file`, for a server process to run; `file`. */
export function compileScript(source: string, file: string): string {
  const { code } = transformFileSync(source, {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  fs.writeFileSync(file, code);
  return file;
}

/** bench/raw-server.ts compiled to `<dir>/raw-server.js` (under the repo, so `pg` resolves from node_modules); its path. */
export const compileRawServer = (dir: string): string => compileScript('bench/raw-server.ts', path.join(dir, 'raw-server.js'));
