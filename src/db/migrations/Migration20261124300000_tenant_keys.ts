import { Migration } from '@mikro-orm/migrations';

/**
 * Tenant keys (docs/scaling.md, "Sharding by community"): every foreign key between tenant
 * records is composite, `(community_id, x_id)` referencing `(community_id, id)`, so the
 * database itself refuses a membership, a field value, a notification recipient or delivery,
 * a webhook delivery or an API key's successor that points into another community; and every
 * unique constraint of a tenant table leads with `community_id` (the shape Citus needs to distribute by community).
 * The child tables that had no `community_id` (field values, notification recipients and
 * deliveries) get it, filled from their parent.
 *
 * Also: each caller's last write position for read-your-writes on replicas
 * (src/db/replicas.ts), when Redis is not configured. Unlogged: no WAL for a row rewritten at
 * every write, and nothing a replica needs (it is read on the primary only). A crash of the
 * primary empties it (docs/scaling.md says what that means).
 */
export class Migration20261124300000_tenant_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create unlogged table caller_wal_positions (caller text primary key, lsn pg_lsn not null);

      -- What a composite key references: (community_id, id) of each parent.
      alter table groups add constraint groups_community_id_id_unique unique (community_id, id);
      alter table members add constraint members_community_id_id_unique unique (community_id, id);
      alter table additional_fields add constraint additional_fields_community_id_id_unique unique (community_id, id);
      alter table notifications add constraint notifications_community_id_id_unique unique (community_id, id);
      alter table webhook_endpoints add constraint webhook_endpoints_community_id_id_unique unique (community_id, id);

      -- Memberships: both ends in the membership's community.
      alter table group_memberships drop constraint group_memberships_group_id_fkey;
      alter table group_memberships drop constraint group_memberships_member_id_fkey;
      alter table group_memberships add constraint group_memberships_group_id_fkey
        foreign key (community_id, group_id) references groups (community_id, id) on delete cascade;
      alter table group_memberships add constraint group_memberships_member_id_fkey
        foreign key (community_id, member_id) references members (community_id, id) on delete cascade;
      alter table group_memberships drop constraint group_memberships_group_member_unique;
      alter table group_memberships add constraint group_memberships_group_member_unique unique (community_id, group_id, member_id);
      alter table group_memberships drop constraint group_memberships_group_external_id_unique;
      alter table group_memberships add constraint group_memberships_group_external_id_unique unique (community_id, group_id, external_id);

      -- Additional field values: the member's community, and a field of that community.
      alter table member_field_values add column community_id uuid;
      update member_field_values v set community_id = m.community_id from members m where m.id = v.member_id;
      alter table member_field_values alter column community_id set not null;
      alter table member_field_values drop constraint member_field_values_member_id_fkey;
      alter table member_field_values drop constraint member_field_values_field_id_fkey;
      alter table member_field_values add constraint member_field_values_member_id_fkey
        foreign key (community_id, member_id) references members (community_id, id) on delete cascade;
      alter table member_field_values add constraint member_field_values_field_id_fkey
        foreign key (community_id, field_id) references additional_fields (community_id, id) on delete cascade;

      -- Notification recipients and deliveries: the notification's community, members of it.
      alter table notification_recipients add column community_id uuid;
      update notification_recipients r set community_id = n.community_id from notifications n where n.id = r.notification_id;
      alter table notification_recipients alter column community_id set not null;
      alter table notification_recipients drop constraint notification_recipients_notification_id_fkey;
      alter table notification_recipients drop constraint notification_recipients_member_id_fkey;
      alter table notification_recipients add constraint notification_recipients_notification_id_fkey
        foreign key (community_id, notification_id) references notifications (community_id, id) on delete cascade;
      alter table notification_recipients add constraint notification_recipients_member_id_fkey
        foreign key (community_id, member_id) references members (community_id, id) on delete cascade;

      alter table notification_deliveries add column community_id uuid;
      update notification_deliveries d set community_id = n.community_id from notifications n where n.id = d.notification_id;
      alter table notification_deliveries alter column community_id set not null;
      alter table notification_deliveries drop constraint notification_deliveries_notification_id_fkey;
      alter table notification_deliveries drop constraint notification_deliveries_member_id_fkey;
      alter table notification_deliveries add constraint notification_deliveries_notification_id_fkey
        foreign key (community_id, notification_id) references notifications (community_id, id) on delete cascade;
      alter table notification_deliveries add constraint notification_deliveries_member_id_fkey
        foreign key (community_id, member_id) references members (community_id, id) on delete cascade;
      alter table notification_deliveries drop constraint notification_deliveries_notification_member_unique;
      alter table notification_deliveries add constraint notification_deliveries_notification_member_unique unique (community_id, notification_id, member_id);

      -- Webhook deliveries: an endpoint of the delivery's community.
      alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_fkey;
      alter table webhook_deliveries add constraint webhook_deliveries_endpoint_id_fkey
        foreign key (community_id, endpoint_id) references webhook_endpoints (community_id, id) on delete cascade;
      alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_event_unique;
      alter table webhook_deliveries add constraint webhook_deliveries_endpoint_event_unique unique (community_id, endpoint_id, event_id);

      -- API keys: a rotation's successor is a key of the same community (only the successor
      -- is cleared when it is deleted: community_id stays).
      alter table api_keys add constraint api_keys_community_id_id_unique unique (community_id, id);
      alter table api_keys drop constraint api_keys_replaced_by_fkey;
      alter table api_keys add constraint api_keys_replaced_by_fkey
        foreign key (community_id, replaced_by) references api_keys (community_id, id) on delete set null (replaced_by);
    `);
  }
}
