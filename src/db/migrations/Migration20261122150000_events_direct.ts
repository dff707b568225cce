import { Migration } from '@mikro-orm/migrations';
import { ALL_AUDITED, captureFunctions } from './event-capture';

/**
 * The outbox, written once (docs/events.md, "How events are made"). The first version
 * (Migration20261122140000_events) staged every changed row and, at commit, looked each record
 * up again, built its data and wrote the event: two writes and a lookup per event, and eight
 * statements per transaction. Now:
 *
 * - The capture triggers (one per statement, with transition tables) write each event ONCE,
 *   its `data` built from the transition table's row by the table's shape (`EVENT_SHAPES`, a
 *   SQL expression written into each table's generated function: no function call per row). A later
 *   statement of the same transaction that changes what an event of it shows (a member's
 *   additional field values, a group's membership count) refreshes that event in place.
 * - Positions move to `event_commits`: one row per (transaction, community), written at
 *   commit under the single sequencer lock, as before. A transaction's first event of a
 *   community queues that commit-time trigger once, through one row in the unlogged
 *   `event_pending` (no index; stale rows are swept by txid horizon).
 * - Event ids are made from (position, seq) when read (`event_id`, UUID version 8 layout):
 *   no random id, no unique index per event; an `after` cursor decodes to its position.
 */
export class Migration20261122150000_events_direct extends Migration {
  override async up(): Promise<void> {
    for (const table of ALL_AUDITED) {
      this.addSql(`drop trigger ${table}_events_ins on ${table}; drop trigger ${table}_events_upd on ${table}; drop trigger ${table}_events_del on ${table};`);
    }
    this.addSql(`
      drop trigger event_transactions_commit on event_transactions;
      drop function events_capture(); drop function events_capture_values(); drop function events_commit();

      -- Stable, not immutable: to_char is stable, and only a function no less volatile than
      -- its body is inlined (about 3 us an event where it is used).
      create or replace function event_ts(t timestamptz) returns text language sql stable as $$
        select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      $$;

      -- An event's public id: its position (48 bits) and seq (60 bits) in a UUID of version 8.
      create function event_id(pos bigint, seq bigint) returns uuid language sql immutable as $$
        select (lpad(to_hex(pos), 12, '0') || '80008' || lpad(to_hex(seq), 15, '0'))::uuid
      $$;

      -- One row per (committed transaction, community) that wrote events: the feed's order.
      create table event_commits (
        community_id uuid not null,
        position bigint not null,
        txid xid8 not null,
        committed_at timestamptz(3) not null,
        primary key (community_id, position)
      );
      create index event_commits_position_idx on event_commits (position);
      insert into event_commits (community_id, position, txid, committed_at)
        select community_id, position, txid, max(created_at) from events where position is not null group by 1, 2, 3;
      delete from events where position is null;

      alter table events drop constraint events_pkey;
      alter table events drop constraint events_id_unique;
      alter table events drop column id;
      alter table events drop column position;
      alter table events alter column data type json using data::json;
      alter table events add primary key (txid, seq);
      alter table events alter column seq set cache 100;
      drop table event_staging;
      drop table event_transactions;
      drop function event_uuid_v7();

      -- A writing transaction's first event of a community inserts one row here: its insert
      -- queues events_commit() for the commit. Never read by key: no index.
      create unlogged table event_pending (
        txid xid8 not null default pg_current_xact_id(),
        community_id uuid not null
      );

      -- Whether this transaction already wrote events of the resource.
      create function events_written(resource text) returns boolean language sql stable as $$
        select strpos(coalesce(current_setting('events.open', true), ''), ':' || resource || ',') > 0
      $$;

      -- Instances whose event hub has GraphQL subscribers (modules/events/hub.ts): the commit
      -- trigger NOTIFYs only while one has renewed its entry in the last 2 minutes.
      create unlogged table event_listeners (instance_id text primary key, seen_at timestamptz not null);

      -- At commit, once per (writing transaction, community).
      create function events_commit() returns trigger language plpgsql as $$
      declare
        pos bigint;
        hooked boolean;
        heard boolean;
      begin
        -- The single sequencer: held until this transaction's commit is complete, so positions
        -- become visible in order and a reader never sees a later one before an earlier one.
        perform pg_advisory_xact_lock(7355608, 1);
        insert into event_commits (community_id, position, txid, committed_at)
          values (NEW.community_id, nextval('event_positions'), NEW.txid, clock_timestamp())
          returning position into pos;
        select exists (select 1 from webhook_endpoints w where w.community_id = NEW.community_id and w.enabled),
               exists (select 1 from event_listeners l where l.seen_at > now() - interval '2 minutes')
          into hooked, heard;
        -- Webhooks: one dispatch job when the community has an enabled endpoint.
        if hooked then
          perform graphile_worker.add_job('webhooks:dispatch', json_build_object('position', pos, 'communityId', NEW.community_id), max_attempts => 25);
        end if;
        -- Subscriptions on every instance (delivered at commit only), when some instance listens.
        if heard then perform pg_notify('community_events', pos::text); end if;
        -- Now and then, the queue rows of finished transactions go.
        if pos % 1000 = 0 then
          delete from event_pending where txid < pg_snapshot_xmin(pg_current_snapshot());
        end if;
        return null;
      end $$;

      create constraint trigger event_pending_commit after insert on event_pending
        deferrable initially deferred for each row execute function events_commit();
    `);
    for (const sql of captureFunctions('pending')) this.addSql(sql);
    for (const table of ALL_AUDITED) {
      this.addSql(`
        create trigger ${table}_events_ins after insert on ${table} referencing new table as new_rows
          for each statement execute function events_capture_${table}();
        create trigger ${table}_events_upd after update on ${table} referencing old table as old_rows new table as new_rows
          for each statement execute function events_capture_${table}();
        create trigger ${table}_events_del after delete on ${table} referencing old table as old_rows
          for each statement execute function events_capture_${table}();
      `);
    }
  }

  override async down(): Promise<void> {
    throw new Error('Migration20261122150000_events_direct cannot be reverted: restore a backup taken before it');
  }
}
