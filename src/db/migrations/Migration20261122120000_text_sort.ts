import { Migration } from '@mikro-orm/migrations';

/**
 * Text sorts are case-insensitive (`lower(column)`, see src/db/lean.ts): these indexes serve
 * `order by lower(name), created_at, id` per community, like the createdAt indexes do.
 */
export class Migration20261122120000_text_sort extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index groups_community_lower_name_idx on groups (community_id, lower(name), created_at, id);');
    this.addSql('create index members_community_lower_first_name_idx on members (community_id, lower(first_name), created_at, id);');
    this.addSql('create index members_community_lower_last_name_idx on members (community_id, lower(last_name), created_at, id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index groups_community_lower_name_idx;');
    this.addSql('drop index members_community_lower_first_name_idx;');
    this.addSql('drop index members_community_lower_last_name_idx;');
  }
}
