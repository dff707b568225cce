import { Migration } from '@mikro-orm/migrations';
import { captureFunctions } from './event-capture';

/**
 * The outbox with less work per writing transaction (docs/performance.md, "Where the outbox's
 * time goes" and "Counted, not timed": instructions counted with callgrind, a fifth fewer per
 * POST /groups).
 *
 * - The commit trigger sits on `events` itself: each capture statement marks one event of each
 *   community it wrote (`opens`, by row_number over the statement's rows), and the deferred
 *   constraint trigger runs only for marked rows (its WHEN is checked as the row is written).
 *   No event_pending row, no array of communities, no transaction-local setting per statement.
 * - events_commit takes the position once per (transaction, community): a later statement's
 *   mark is skipped by one transaction-local setting read at commit. The lock, the position and
 *   that setting are plain assignments (no query each), and the webhook/listener checks ride on
 *   the event_commits insert's RETURNING.
 * - events_written (an update merges into an earlier event of the same record in the
 *   transaction) reads the transaction's own events by the primary key (txid, seq) instead of
 *   the setting: only updates ask it, and a rolled-back savepoint's events are not seen.
 */
export class Migration20261123000000_events_lean extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table events add column opens boolean;
      drop table event_pending;

      create or replace function events_written(resource text) returns boolean language sql stable as $$
        select exists (select 1 from events where txid = pg_current_xact_id() and starts_with(type, resource || '.'))
      $$;

      -- At commit, for each statement's marked event of a community: once per (transaction, community).
      create or replace function events_commit() returns trigger language plpgsql as $$
      declare
        comm uuid := NEW.community_id;
        done text := coalesce(current_setting('events.sequenced', true), '');
        locked text;
        pos bigint;
        hooked boolean;
        heard boolean;
      begin
        if strpos(done, comm::text) > 0 then return null; end if;
        -- The single sequencer: held until this transaction's commit is complete, so positions
        -- become visible in order and a reader never sees a later one before an earlier one.
        -- (An assignment, not PERFORM: a plain expression, no query.)
        locked := pg_advisory_xact_lock(7355608, 1);
        pos := nextval('event_positions');
        insert into event_commits (community_id, position, txid, committed_at)
          values (comm, pos, NEW.txid, clock_timestamp())
          returning exists (select 1 from webhook_endpoints w where w.community_id = comm and w.enabled),
                    exists (select 1 from event_listeners l where l.seen_at > now() - interval '2 minutes')
            into hooked, heard;
        done := set_config('events.sequenced', done || comm::text || ',', true);
        -- Webhooks: one dispatch job when the community has an enabled endpoint.
        if hooked then
          perform graphile_worker.add_job('webhooks:dispatch', json_build_object('position', pos, 'communityId', comm), max_attempts => 25);
        end if;
        -- Subscriptions on every instance (delivered at commit only), when some instance listens.
        if heard then perform pg_notify('community_events', pos::text); end if;
        return null;
      end $$;

      create constraint trigger events_opened after insert on events
        deferrable initially deferred for each row when (NEW.opens) execute function events_commit();
    `);
    for (const sql of captureFunctions('lean')) this.addSql(sql);
  }

  override async down(): Promise<void> {
    throw new Error('Migration20261123000000_events_lean cannot be reverted: restore a backup taken before it');
  }
}
