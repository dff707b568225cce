import { Migration } from '@mikro-orm/migrations';

/**
 * Finding members and groups (docs/api.md, "Finding members and groups"; docs/performance.md,
 * "Search"): every filter is served by an index that has the community (or, for additional
 * field values, the community's field) in front.
 *
 * - `q`: trigram GIN indexes (pg_trgm serves `ILIKE '%text%'`) per searched column; the
 *   statement's community_id condition is checked on the rows they find. Measured against
 *   GIN indexes with the community in front (btree_gin): with a million members in one
 *   community its key's posting list is read by every search, 12-25 ms per index against
 *   0.2-0.4 ms (docs/performance.md, "Search"). pg_trgm is a trusted contrib module shipped
 *   with PostgreSQL (embedded and Debian packages alike).
 * - `emailAddress`: members_community_email_unique, (community_id, lower(email_address)), already serves it.
 * - `field.<id>=<value>`: (field_id, md5(value)) with member_id included; a field belongs to one
 *   community. md5 keeps entries small whatever the value's length (2048 characters of UTF-8
 *   can exceed a btree entry's limit); the statement compares the value itself too. It leads
 *   with field_id, so it also serves what the (field_id) index served (the cascade of a field
 *   delete), which it replaces. The planner counts md5(value) and
 *   value as two conditions and so expects few matches: it finds the matching values through
 *   this index and sorts them, never walking the members in page order (docs/performance.md,
 *   "Search", has the measurement and why extended statistics were not added).
 */
export class Migration20261124100000_search extends Migration {
  override async up(): Promise<void> {
    this.addSql('create extension if not exists pg_trgm;');
    this.addSql('create index members_search_first_name_idx on members using gin (first_name gin_trgm_ops);');
    this.addSql('create index members_search_last_name_idx on members using gin (last_name gin_trgm_ops);');
    this.addSql(
      "create index members_search_full_name_idx on members using gin ((first_name || ' ' || last_name) gin_trgm_ops);",
    );
    this.addSql('create index members_search_email_idx on members using gin (email_address gin_trgm_ops);');
    this.addSql('create index members_search_external_id_idx on members using gin (external_id gin_trgm_ops);');
    this.addSql('create index groups_search_name_idx on groups using gin (name gin_trgm_ops);');
    this.addSql('create index groups_search_external_id_idx on groups using gin (external_id gin_trgm_ops);');
    this.addSql('create index member_field_values_field_value_idx on member_field_values (field_id, md5(value)) include (member_id);');
    this.addSql('drop index if exists member_field_values_field_idx;');
  }

  override async down(): Promise<void> {
    this.addSql('create index if not exists member_field_values_field_idx on member_field_values (field_id);');
    this.addSql('drop index member_field_values_field_value_idx;');
    this.addSql('drop index groups_search_external_id_idx;');
    this.addSql('drop index groups_search_name_idx;');
    this.addSql('drop index members_search_external_id_idx;');
    this.addSql('drop index members_search_email_idx;');
    this.addSql('drop index members_search_full_name_idx;');
    this.addSql('drop index members_search_last_name_idx;');
    this.addSql('drop index members_search_first_name_idx;');
  }
}
