import { Migration } from '@mikro-orm/migrations';

/**
 * `field.<id>=<value>` in page order (docs/performance.md, "Search"): each value carries its
 * member's createdAt (`member_created_at`, copied when the value is written; a member's
 * createdAt never changes), and the field filter's index is ordered like a members page,
 * `(field_id, value_md5, member_created_at, member_id)`. A page ordered by createdAt (the
 * default) then reads its matches in order from the index and stops at its last row, whatever
 * the number of matches: a value held by 1% of a million members walked ~2,100 members before,
 * each probed through the values' primary key and heap. It replaces
 * member_field_values_field_digest_idx (same leading columns: the count of a common value and
 * the set form keep their index-only scans).
 */
export class Migration20261125110000_field_value_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table member_field_values add column member_created_at timestamptz(3);
      update member_field_values v set member_created_at = m.created_at
        from members m where m.id = v.member_id and m.community_id = v.community_id;
      alter table member_field_values alter column member_created_at set not null;
      create index member_field_values_field_order_idx
        on member_field_values (field_id, value_md5, member_created_at, member_id) include (community_id);
      drop index member_field_values_field_digest_idx;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      create index member_field_values_field_digest_idx on member_field_values (field_id, value_md5) include (member_id, community_id);
      drop index member_field_values_field_order_idx;
      alter table member_field_values drop column member_created_at;`);
  }
}
