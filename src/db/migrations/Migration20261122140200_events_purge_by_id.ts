import { Migration } from '@mikro-orm/migrations';

/**
 * One index less on every event row: event ids are time-ordered (UUID version 7 layout), so the
 * retention purge deletes by id range through the unique index on id instead of by created_at.
 */
export class Migration20261122140200_events_purge_by_id extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop index events_created_idx;');
  }

  override async down(): Promise<void> {
    this.addSql('create index events_created_idx on events (created_at);');
  }
}
