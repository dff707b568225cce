import { Migration } from '@mikro-orm/migrations';

/**
 * Row-level security on every tenant table (every table with `community_id`), ENABLE and
 * FORCE, so the table owner is held to it as well; only a role with BYPASSRLS (or a
 * superuser) passes it, and the service runs its request work as `community_api_service`,
 * which has neither (docs/security.md, "Row-level security"). A row is visible and writable
 * when its community is the transaction's `app.community_id`. The setting sits in a scalar
 * subquery, so PostgreSQL evaluates it once per statement (an InitPlan) and the comparison
 * stays an index condition on the `(community_id, ...)` indexes. `nullif(..., '')`: after a
 * transaction-local set_config the setting reads '' on that connection, not null; with it an
 * unset community matches no row.
 *
 * `event_oldest_position()`: the events feed tells a purged cursor (410) from a foreign one
 * (400) by the oldest position kept in the whole table, which a tenant no longer sees; the
 * function answers it with its owner's rights and returns nothing else.
 */
export class Migration20261124400000_row_level_security extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function event_oldest_position() returns bigint language sql stable security definer
        set search_path = pg_catalog, public
        as $$ select coalesce((select min(position) from public.event_commits), (select last_value + 1 from public.event_positions)) $$;
      alter table additional_fields enable row level security, force row level security;
      create policy tenant_isolation on additional_fields using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table api_keys enable row level security, force row level security;
      create policy tenant_isolation on api_keys using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table event_commits enable row level security, force row level security;
      create policy tenant_isolation on event_commits using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table events enable row level security, force row level security;
      create policy tenant_isolation on events using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table group_memberships enable row level security, force row level security;
      create policy tenant_isolation on group_memberships using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table groups enable row level security, force row level security;
      create policy tenant_isolation on groups using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table import_jobs enable row level security, force row level security;
      create policy tenant_isolation on import_jobs using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table members enable row level security, force row level security;
      create policy tenant_isolation on members using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table notifications enable row level security, force row level security;
      create policy tenant_isolation on notifications using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table webhook_deliveries enable row level security, force row level security;
      create policy tenant_isolation on webhook_deliveries using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table webhook_endpoints enable row level security, force row level security;
      create policy tenant_isolation on webhook_endpoints using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table member_field_values enable row level security, force row level security;
      create policy tenant_isolation on member_field_values using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table notification_recipients enable row level security, force row level security;
      create policy tenant_isolation on notification_recipients using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
      alter table notification_deliveries enable row level security, force row level security;
      create policy tenant_isolation on notification_deliveries using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid)) with check (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop function event_oldest_position();
      drop policy tenant_isolation on additional_fields;
      alter table additional_fields no force row level security, disable row level security;
      drop policy tenant_isolation on api_keys;
      alter table api_keys no force row level security, disable row level security;
      drop policy tenant_isolation on event_commits;
      alter table event_commits no force row level security, disable row level security;
      drop policy tenant_isolation on events;
      alter table events no force row level security, disable row level security;
      drop policy tenant_isolation on group_memberships;
      alter table group_memberships no force row level security, disable row level security;
      drop policy tenant_isolation on groups;
      alter table groups no force row level security, disable row level security;
      drop policy tenant_isolation on import_jobs;
      alter table import_jobs no force row level security, disable row level security;
      drop policy tenant_isolation on members;
      alter table members no force row level security, disable row level security;
      drop policy tenant_isolation on notifications;
      alter table notifications no force row level security, disable row level security;
      drop policy tenant_isolation on webhook_deliveries;
      alter table webhook_deliveries no force row level security, disable row level security;
      drop policy tenant_isolation on webhook_endpoints;
      alter table webhook_endpoints no force row level security, disable row level security;
      drop policy tenant_isolation on member_field_values;
      alter table member_field_values no force row level security, disable row level security;
      drop policy tenant_isolation on notification_recipients;
      alter table notification_recipients no force row level security, disable row level security;
      drop policy tenant_isolation on notification_deliveries;
      alter table notification_deliveries no force row level security, disable row level security;`);
  }
}
