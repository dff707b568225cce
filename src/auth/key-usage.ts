import type { Pool } from 'pg';

/**
 * `lastUsedAt` of API keys, off the request's path: a use is noted in memory; a key is noted at
 * most once per `everyMs` (a minute) on this instance; noted uses are written in one batched
 * statement `flushMs` after the first of them, on the gate's own pool, never inside a request's
 * statement or transaction. A failed write is logged and dropped (the next minute's use writes
 * again). `greatest` keeps the newest time when instances write out of order.
 */
export class KeyUsage {
  private readonly noted = new Map<string, number>();
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly onError: (err: Error) => void,
    private readonly everyMs = 60_000,
    private readonly flushMs = 1_000,
  ) {}

  touch(keyId: string, now = Date.now()): void {
    const last = this.noted.get(keyId);
    if (last !== undefined && now - last < this.everyMs) return;
    this.noted.set(keyId, now);
    this.pending.set(keyId, now);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what is pending now (also at shutdown). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    // Forget keys not noted within the interval, so the map holds only recently used keys.
    const horizon = Date.now() - this.everyMs;
    for (const [id, at] of this.noted) if (at < horizon) this.noted.delete(id);
    if (!batch.size) return this.writing;
    const ids = [...batch.keys()];
    const times = ids.map((id) => new Date(batch.get(id)!).toISOString());
    this.writing = this.writing.then(() =>
      this.pool
        .query({
          name: 'touch-api-keys',
          text: `update api_keys k set last_used_at = greatest(k.last_used_at, u.at)
                   from unnest($1::uuid[], $2::timestamptz[]) as u(id, at) where k.id = u.id`,
          values: [ids, times],
        })
        .then(() => undefined, this.onError),
    );
    return this.writing;
  }
}
