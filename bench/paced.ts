import http from 'node:http';
import type { HttpRequest } from './load';

export interface Paced {
  p50: number;
  p99: number;
  ok: number;
  bad: number;
  /** p99 of how late requests were sent (this process too busy to keep the pace). */
  lateMs: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10 : NaN;

/**
 * Open-loop load at a steady `rate`: request i is sent at start + i / rate, whatever the
 * answers before it did; its latency counts from when it was handed to the agent (so
 * waiting for a free socket counts, and a late timer in this busy process does not).
 * Why not autocannon's `overallRate`: it gives each
 * connection a budget per second that it spends at once when the second starts (bursts
 * of up to `connections` requests every second), and its coordinated-omission
 * correction assumes 1 ms between requests at low per-connection rates, which fills
 * the histogram with invented samples. At most `sockets` requests are in flight.
 */
export async function paced(baseUrl: string, req: HttpRequest, rate: number, seconds: number, sockets: number): Promise<Paced> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const url = new URL(baseUrl + req.path);
  const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies: number[] = [];
  const late: number[] = [];
  let bad = 0;
  await new Promise<void>((resolve) => {
    const start = performance.now();
    let sent = 0;
    let finished = 0;
    const end = (latency: number | undefined) => {
      if (latency === undefined) bad++;
      else latencies.push(latency);
      if (++finished === total) resolve();
    };
    const send = () => {
      const at = performance.now();
      const r = http.request(url, { method: req.method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => end(res.statusCode! < 300 ? performance.now() - at : undefined));
      });
      r.on('error', () => end(undefined));
      r.end(req.body);
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      for (; sent < due; sent++) {
        late.push(performance.now() - (start + (sent * 1000) / rate));
        send();
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  agent.destroy();
  latencies.sort((a, b) => a - b);
  late.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), ok: latencies.length, bad, lateMs: percentile(late, 99) };
}
