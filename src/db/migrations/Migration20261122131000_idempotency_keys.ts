import { Migration } from '@mikro-orm/migrations';

/**
 * The stored first answer of each Idempotency-Key, per API key (src/rest/idempotency.ts).
 * Written in the transaction of the request's effects; expired rows are deleted by the
 * scheduled `purge_idempotency_keys` job.
 */
export class Migration20261122131000_idempotency_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table idempotency_keys (
        owner text not null,
        key text not null,
        fingerprint text not null,
        status smallint not null,
        content_type text not null,
        body text not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        primary key (owner, key)
      );
      create index idempotency_keys_expires_idx on idempotency_keys (expires_at);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table idempotency_keys;');
  }
}
