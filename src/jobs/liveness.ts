import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import type { Logger } from '../logger';


/**
 * graphile-worker keeps a crashed worker's job locked for 4 hours. Each instance writes a
 * heartbeat for its workers, and every instance releases the locks of workers whose
 * heartbeat stopped, so an import killed mid-run resumes from its checkpoint within
 * about half a minute on whichever instance is still alive.
 */
export class WorkerLiveness {
  readonly events = new EventEmitter();
  private readonly workerIds = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly logger: Logger,
    /** A worker not heard from for this long is dead: its locked jobs go back to the queue. */
    private readonly staleSeconds: number,
  ) {
    this.events.on('worker:create', ({ worker }: { worker: { workerId: string } }) => this.workerIds.add(worker.workerId));
  }

  start(): void {
    const tick = () => void this.beat().catch((err) => this.logger.warn({ err: (err as Error).message }, 'worker heartbeat failed'));
    tick();
    this.timer = setInterval(tick, Math.min(5_000, (this.staleSeconds * 1000) / 3));
    this.timer.unref();
  }

  async beat(): Promise<void> {
    const ids = [...this.workerIds];
    await this.pool.query(
      `insert into worker_heartbeats (worker_id, beat_at) select unnest($1::text[]), now()
       on conflict (worker_id) do update set beat_at = excluded.beat_at`,
      [ids],
    );
    await this.pool.query(
      `select ${this.schema}.force_unlock_workers(array(
         select distinct j.locked_by from ${this.schema}._private_jobs j
         where j.locked_by is not null and j.locked_at < now() - make_interval(secs => $1)
           and not exists (select 1 from worker_heartbeats h
                           where h.worker_id = j.locked_by and h.beat_at > now() - make_interval(secs => $1))))`,
      [this.staleSeconds],
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pool.query('delete from worker_heartbeats where worker_id = any($1::text[]) or beat_at < now() - interval \'1 day\'', [
      [...this.workerIds],
    ]);
  }
}
