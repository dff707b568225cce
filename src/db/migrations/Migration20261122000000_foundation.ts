import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000000_foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table communities (
        id uuid primary key,
        name varchar(256) not null,
        created_at timestamptz(3) not null
      );
      create table api_keys (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        key_hash varchar(64) not null,
        scopes text[] not null default '{}',
        rate_limit_per_hour integer null check (rate_limit_per_hour > 0),
        revoked_at timestamptz(3) null,
        created_at timestamptz(3) not null,
        constraint api_keys_key_hash_unique unique (key_hash)
      );
      create index api_keys_community_id_index on api_keys (community_id);
      create table groups (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        external_id varchar(128) null,
        name varchar(256) not null,
        about text null,
        color varchar(7) null,
        membership_count integer not null default 0 check (membership_count >= 0),
        is_visible_in_app boolean not null default true,
        state text not null default 'ORIGINAL' check (state in ('ORIGINAL', 'ARCHIVED')),
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null,
        constraint groups_community_external_id_unique unique (community_id, external_id)
      );
      create index groups_community_created_idx on groups (community_id, created_at, id);
      create table rate_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table rate_limits; drop table groups; drop table api_keys; drop table communities;');
  }
}
