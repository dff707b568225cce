import fs from 'node:fs';

/**
 * The V8 inspector of a server the bench started with `--inspect-port=127.0.0.1:<port>`:
 * nothing listens until the bench sends SIGUSR1 (Node opens the inspector on that port),
 * so the server runs its load exactly as in production and is only looked at afterwards.
 * Used for the live heap (a full GC, then `process.memoryUsage()`) and for heap snapshots
 * (bench/heap.ts).
 */
export interface Inspector {
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  /** A full garbage collection, then the process's memory as Node reports it (bytes) and V8's spaces. */
  liveMemory(): Promise<LiveMemory>;
  /** The same without collecting garbage first: what the process holds now. */
  memory(): Promise<LiveMemory>;
  /** HeapProfiler.takeHeapSnapshot (it collects garbage first), streamed to `file`. */
  heapSnapshot(file: string): Promise<void>;
  close(): void;
}

export interface LiveMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: { name: string; size: number; physical: number; used: number }[];
}

export const inspectFlag = (port: number) => `--inspect-port=127.0.0.1:${port}`;

export async function attachInspector(pid: number, port: number): Promise<Inspector> {
  process.kill(pid, 'SIGUSR1');
  let target: { webSocketDebuggerUrl: string } | undefined;
  const deadline = Date.now() + 15_000;
  while (!target) {
    try {
      [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    } catch {
      if (Date.now() > deadline) throw new Error(`bench: no inspector on port ${port} of pid ${pid}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('bench: inspector connection failed'));
  });
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, (params: Record<string, unknown>) => void>();
  ws.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: Record<string, unknown> };
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`inspector: ${msg.error.message}`));
      else p?.resolve(msg.result);
    } else if (msg.method) listeners.get(msg.method)?.(msg.params ?? {});
  };
  const send = <T>(method: string, params: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  const memory = async (): Promise<LiveMemory> => {
    const expression = `JSON.stringify({ ...process.memoryUsage(), spaces: process.getBuiltinModule('v8').getHeapSpaceStatistics()
      .map((s) => ({ name: s.space_name, size: s.space_size, physical: s.physical_space_size, used: s.space_used_size })) })`;
    const { result } = await send<{ result: { value: string } }>('Runtime.evaluate', { expression, returnByValue: true });
    return JSON.parse(result.value) as LiveMemory;
  };
  return {
    send,
    memory,
    async liveMemory() {
      // Twice: the first collection may leave what finalizers free for the second.
      await send('HeapProfiler.collectGarbage');
      await send('HeapProfiler.collectGarbage');
      return memory();
    },
    async heapSnapshot(file) {
      const out = fs.openSync(file, 'w');
      try {
        listeners.set('HeapProfiler.addHeapSnapshotChunk', (p) => fs.writeSync(out, String(p.chunk)));
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false });
      } finally {
        listeners.delete('HeapProfiler.addHeapSnapshotChunk');
        fs.closeSync(out);
      }
    },
    close: () => ws.close(),
  };
}
