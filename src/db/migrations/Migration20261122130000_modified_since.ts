import { Migration } from '@mikro-orm/migrations';

/**
 * `modifiedSince` on the lists of groups, members, additional fields (per community) and
 * memberships (per group): a range scan on modified_at, id breaks ties like the default order.
 */
export class Migration20261122130000_modified_since extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index groups_community_modified_idx on groups (community_id, modified_at, id);');
    this.addSql('create index members_community_modified_idx on members (community_id, modified_at, id);');
    this.addSql('create index additional_fields_community_modified_idx on additional_fields (community_id, modified_at, id);');
    this.addSql('create index group_memberships_group_modified_idx on group_memberships (group_id, modified_at, id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index groups_community_modified_idx;');
    this.addSql('drop index members_community_modified_idx;');
    this.addSql('drop index additional_fields_community_modified_idx;');
    this.addSql('drop index group_memberships_group_modified_idx;');
  }
}
