import { Migration } from '@mikro-orm/migrations';

/** Headers of a stored answer (e.g. `Location` of an import trigger's 202), replayed with it. */
export class Migration20261122131100_idempotency_headers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table idempotency_keys add column headers jsonb not null default '{}'::jsonb;`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table idempotency_keys drop column headers;');
  }
}
