import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: a crash, no cleanup. */
  kill(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '../..');

/** Starts `src/main.ts` as a real second process, as `npm start` would, and waits until it serves. */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  // Generous: a loaded CI machine may take long to compile and boot; this bounds a hang, it measures nothing.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${out}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Sends raw bytes to `port` on 127.0.0.1; resolves with the status code, head and body once the server closes. */
export function rawHttp(port: number, data: string | Buffer): Promise<{ status: number; head: string; body: string; bodyBytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end < 0 ? all.length : end).toString('latin1');
      const bodyBytes = end < 0 ? Buffer.alloc(0) : all.subarray(end + 4);
      resolve({ status: Number(head.split(' ')[1]), head, body: bodyBytes.toString('utf8'), bodyBytes });
    });
    socket.write(data);
  });
}

/** An operator GraphQL call (ADMIN_TOKEN) to a service at `base`; the answer's `data`. */
export async function operatorCall(base: string, adminToken: string, query: string, variables: object): Promise<any> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  return ((await res.json()) as { data?: unknown }).data;
}

/** A new community and an API key for it, through the operator mutations of a running service. */
export async function serviceTenant(base: string, adminToken: string, name: string, rateLimitPerHour?: number): Promise<{ communityId: string; key: string; keyId: string }> {
  const communityId = (await operatorCall(base, adminToken, 'mutation($i: CreateCommunityInput!) { createCommunity(input: $i) { id } }', { i: { name } })).createCommunity.id;
  const input = rateLimitPerHour === undefined ? { communityId } : { communityId, rateLimitPerHour };
  const { id, key } = (await operatorCall(base, adminToken, 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { id key } }', { i: input })).createApiKey;
  return { communityId, key, keyId: id };
}
