import { Migration } from '@mikro-orm/migrations';
import { SNAPSHOTS, captureFunctions, eventDataFunction } from './event-capture';

/**
 * Typed snapshots (docs/performance.md, "Typed snapshots"): an event keeps its record as a
 * composite value of the record's own type, in its own column of `events` (`group_snapshot`,
 * `group_membership_snapshot`, ...: SNAPSHOTS in event-capture.ts), not as JSON built for
 * every event written. Counted with callgrind, the outbox's work in PostgreSQL for a bulk of
 * 1,000 memberships fell from 80 to 31 million instructions, and for one group insert from
 * 309,000 to 265,000: building the JSON (a type lookup per value, two to_char) was most of an
 * event's cost. The JSON is built when the event is read, by event_data(), which every reader of
 * an event's data calls (feed, subscriptions, webhook dispatch): the same shape over the same
 * values, so an event reads exactly as before. Deleted and reordered events (a reference, not
 * a record) and the events written before this migration keep their JSON in `data`.
 *
 * Updates too: an update's `changes` come from comparing the columns one by one
 * (changedFields over TABLE_COLUMNS) instead of both rows as jsonb, and event_field is one
 * inlined expression; a captured update of a group cost 846,000 instructions more than
 * without the outbox, now 477,000.
 */
export class Migration20261123010000_event_snapshots extends Migration {
  override async up(): Promise<void> {
    for (const s of Object.values(SNAPSHOTS)) {
      this.addSql(`
      create type ${s.name} as (${s.attributes.map(([name, type]) => `${name} ${type}`).join(', ')});
      alter table events add column ${s.name} ${s.name};`);
    }
    this.addSql(eventDataFunction());
    // A changed column's REST name, as before, now one expression (no subquery): inlined where
    // it is used instead of a SQL function set up for every update (75,000 instructions each).
    this.addSql(`
      create or replace function event_field(col text) returns text language sql immutable as $$
        select case when col in ('icon_style', 'icon_unicode') then 'icon'
                    else lower(left(col, 1)) || substr(replace(initcap(col), '_', ''), 2) end
      $$;`);
    for (const sql of captureFunctions('snapshot')) this.addSql(sql);
  }

  override async down(): Promise<void> {
    throw new Error('Migration20261123010000_event_snapshots cannot be reverted: restore a backup taken before it');
  }
}
