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
 */
export class Migration20261123010000_event_snapshots extends Migration {
  override async up(): Promise<void> {
    for (const s of Object.values(SNAPSHOTS)) {
      this.addSql(`
      create type ${s.type} as (${s.attributes.map(([name, type]) => `${name} ${type}`).join(', ')});
      alter table events add column ${s.column} ${s.type};`);
    }
    this.addSql(eventDataFunction());
    for (const sql of captureFunctions('snapshot')) this.addSql(sql);
  }

  override async down(): Promise<void> {
    throw new Error('Migration20261123010000_event_snapshots cannot be reverted: restore a backup taken before it');
  }
}
