import { Migration } from '@mikro-orm/migrations';

/**
 * API key lifecycle (docs/security.md): an optional expiry (an expired key is refused), when
 * the key was last used (written in batches, at most once a minute per key per instance), the
 * successor a rotation issued, and when the `api_key.expired` event was written (the
 * partial index finds the keys whose expiry is still to be announced).
 */
export class Migration20261124210000_api_key_lifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table api_keys
        add column expires_at timestamptz(3),
        add column last_used_at timestamptz(3),
        add column replaced_by uuid references api_keys (id) on delete set null,
        add column expiry_announced_at timestamptz(3);
      create index api_keys_expiry_due_idx on api_keys (expires_at)
        where expires_at is not null and expiry_announced_at is null and revoked_at is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop index api_keys_expiry_due_idx;
      alter table api_keys drop column expires_at, drop column last_used_at, drop column replaced_by, drop column expiry_announced_at;`);
  }
}
