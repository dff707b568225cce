import { Migration } from '@mikro-orm/migrations';

/** Members, additional fields and their values, group memberships; membershipCount kept by triggers. */
export class Migration20261122010000_members extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table additional_fields (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        name varchar(256) not null,
        placeholder varchar(256) null,
        type text not null check (type in ('TEXT')),
        icon_style text null check (icon_style in ('REGULAR', 'SOLID', 'BRANDS')),
        icon_unicode varchar(6) null,
        is_editable_by_member boolean not null default true,
        is_mandatory_for_member boolean not null default false,
        is_visible_in_app boolean not null default true,
        order_number integer not null check (order_number >= 0),
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null
      );
      create index additional_fields_community_order_idx on additional_fields (community_id, order_number);
      create index additional_fields_community_created_idx on additional_fields (community_id, created_at, id);

      create table members (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        external_id varchar(128) null,
        first_name varchar(256) null,
        last_name varchar(256) null,
        email_address varchar(320) null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null,
        constraint members_community_external_id_unique unique (community_id, external_id)
      );
      create unique index members_community_email_unique on members (community_id, lower(email_address));
      create index members_community_created_idx on members (community_id, created_at, id);

      create table member_field_values (
        member_id uuid not null references members (id) on delete cascade,
        field_id uuid not null references additional_fields (id) on delete cascade,
        value text not null,
        primary key (member_id, field_id)
      );
      create index member_field_values_field_idx on member_field_values (field_id);

      create table group_memberships (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        group_id uuid not null references groups (id) on delete cascade,
        member_id uuid not null references members (id) on delete cascade,
        external_id varchar(128) null,
        title varchar(256) null,
        role text not null default 'MEMBER' check (role in ('MEMBER', 'ADMIN')),
        order_number integer not null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null,
        constraint group_memberships_group_member_unique unique (group_id, member_id),
        constraint group_memberships_group_external_id_unique unique (group_id, external_id)
      );
      create index group_memberships_group_order_idx on group_memberships (group_id, order_number, id);
      create index group_memberships_group_created_idx on group_memberships (group_id, created_at, id);
      create index group_memberships_member_idx on group_memberships (member_id);

      -- membershipCount stays exact in the same transaction as the rows it counts,
      -- whichever path changes them (insert, delete, cascade from a member). Set-based.
      create function group_memberships_count_ins() returns trigger language plpgsql as $$
      begin
        update groups g set membership_count = g.membership_count + c.n
          from (select group_id, count(*) as n from new_rows group by group_id) c
          where g.id = c.group_id;
        return null;
      end $$;
      create function group_memberships_count_del() returns trigger language plpgsql as $$
      begin
        update groups g set membership_count = g.membership_count - c.n
          from (select group_id, count(*) as n from old_rows group by group_id) c
          where g.id = c.group_id;
        return null;
      end $$;
      create trigger group_memberships_count_ins after insert on group_memberships
        referencing new table as new_rows for each statement execute function group_memberships_count_ins();
      create trigger group_memberships_count_del after delete on group_memberships
        referencing old table as old_rows for each statement execute function group_memberships_count_del();
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop table group_memberships; drop function group_memberships_count_ins(); drop function group_memberships_count_del();
      drop table member_field_values; drop table members; drop table additional_fields;
    `);
  }
}
