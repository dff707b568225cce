import { Migration } from '@mikro-orm/migrations';

/**
 * A group's memberships are read by `community_id = ? and group_id = ?` in one of three orders
 * (createdAt, modifiedAt, orderNumber; ties by createdAt, then id). Their order indexes led with
 * group_id and lacked the community, so the community stayed a filter on every heap row, and a
 * deep page could not find its ids by an index-only scan (docs/performance.md, "Cost does not
 * grow with the data"); the orderNumber and modifiedAt indexes lacked createdAt, so those orders
 * needed an incremental sort of every row up to the page. The same three indexes, community first and
 * each exactly the page's ORDER BY: as many indexes as before, so writes maintain no more.
 */
export class Migration20261125050000_memberships_community_first extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index group_memberships_community_group_created_idx on group_memberships (community_id, group_id, created_at, id);
      create index group_memberships_community_group_modified_idx on group_memberships (community_id, group_id, modified_at, created_at, id);
      create index group_memberships_community_group_order_idx on group_memberships (community_id, group_id, order_number, created_at, id);
      drop index group_memberships_group_created_idx;
      drop index group_memberships_group_modified_idx;
      drop index group_memberships_group_order_idx;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      create index group_memberships_group_created_idx on group_memberships (group_id, created_at, id);
      create index group_memberships_group_modified_idx on group_memberships (group_id, modified_at, id);
      create index group_memberships_group_order_idx on group_memberships (group_id, order_number, id);
      drop index group_memberships_community_group_created_idx;
      drop index group_memberships_community_group_modified_idx;
      drop index group_memberships_community_group_order_idx;`);
  }
}
