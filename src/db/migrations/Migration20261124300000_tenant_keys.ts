import { Migration } from '@mikro-orm/migrations';

/**
 * Read-your-writes on replicas (src/db/replicas.ts): each caller's last write position, when
 * Redis is not configured. Unlogged: no WAL for a row rewritten at every write, and nothing a
 * replica needs (it is only ever read on the primary). A crash of the primary empties it
 * (docs/scaling.md says what that means).
 */
export class Migration20261124300000_tenant_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create unlogged table caller_wal_positions (caller text primary key, lsn pg_lsn not null);`);
  }
}
