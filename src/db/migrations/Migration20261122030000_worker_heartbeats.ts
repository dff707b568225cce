import { Migration } from '@mikro-orm/migrations';

/** Liveness of job workers, so a crashed worker's locked jobs are released (src/jobs/liveness.ts). */
export class Migration20261122030000_worker_heartbeats extends Migration {
  override async up(): Promise<void> {
    this.addSql('create table worker_heartbeats (worker_id text primary key, beat_at timestamptz not null);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table worker_heartbeats;');
  }
}
