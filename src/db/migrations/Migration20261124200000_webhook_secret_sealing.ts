import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook signing secrets are stored sealed (AES-256-GCM, `enc1:<key id>:...`, docs/security.md):
 * the check refuses a plaintext secret from any writer. NOT VALID: rows written before it are
 * sealed by the service at start-up (a migration of literal SQL cannot encrypt), and every
 * update of such a row is checked. `previous_secret` (sealed too) signs beside the new secret
 * until `previous_secret_until`, after a rotation.
 */
export class Migration20261124200000_webhook_secret_sealing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints
        add column previous_secret text,
        add column previous_secret_until timestamptz(3);
      alter table webhook_endpoints
        add constraint webhook_endpoints_secret_sealed
        check (secret like 'enc1:%' and (previous_secret is null or previous_secret like 'enc1:%')) not valid;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints drop constraint webhook_endpoints_secret_sealed;
      alter table webhook_endpoints drop column previous_secret, drop column previous_secret_until;`);
  }
}
