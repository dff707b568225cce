import type { EntityManager } from '@mikro-orm/postgresql';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../common/pagination';
import { isId } from '../../common/ids';
import { preparedRows } from '../../db/prepared';
import { anyOf, arrayOf } from '../../db/sql';
import { AppError, invalid, type FieldIssue } from '../../errors/app-error';
import { Checks } from '../../common/validate';
import type { Event, EventPage } from './event.entity';
import { EVENT_TYPES, eventData, visibleTypes } from './event-types';
import { DEFAULT_EVENT_SETTINGS, EVENT_SETTINGS, type EventSettings } from './settings';
import type { RuntimeState } from '../../state';
import { currentReplica, onPrimary } from '../../db/replicas';

export interface EventRow {
  id: string;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
  changes: string[] | null;
  position: string;
  seq: string;
}

export const toEvent = (r: EventRow): Event => ({ id: r.id, type: r.type, createdAt: new Date(r.created_at), data: r.data, changes: r.changes });

/** The millisecond time in an id of UUID version 7 layout (the first outbox's event ids), else undefined. */
function idTime(id: string): number | undefined {
  if (!isId(id) || id[14] !== '7') return undefined;
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

/**
 * The (position, seq) an event id stands for: ids are made from them when read (`event_id` in
 * the events migration: the position in 48 bits, version 8, then the seq in 60 bits).
 */
export function idPlace(id: string): { position: string; seq: string } | undefined {
  if (!isId(id)) return undefined;
  const hex = id.replace(/-/g, '').toLowerCase();
  if (hex.slice(12, 17) !== '80008') return undefined;
  return { position: BigInt(`0x${hex.slice(0, 12)}`).toString(), seq: BigInt(`0x${hex.slice(17)}`).toString() };
}

/** The columns of an event as the feed, the hub and the dispatch read it (c: event_commits, e: events). */
export const EVENT_COLUMNS = `event_id(c.position, e.seq) as id, e.type, e.created_at, ${eventData('e')} as data, e.changes, c.position, e.seq`;

const cutoff = (retentionDays: number) => new Date(Date.now() - retentionDays * 86_400_000);

/**
 * Checks `types` against the known ones and narrows them to those the key may read: an event
 * is visible to a key holding the read scope of its resource (besides `events:read`).
 */
export function typesFor(scopes: Set<string>, types: string[] | null | undefined, path: (string | number)[] = ['types']): string[] {
  const issues: FieldIssue[] = [];
  for (const t of types ?? []) {
    if (!EVENT_TYPES.includes(t)) issues.push({ path, detail: `unknown event type "${t}"; known types: ${EVENT_TYPES.join(', ')}` });
  }
  if (issues.length) throw invalid(issues);
  const visible = visibleTypes(scopes);
  return types?.length ? visible.filter((t) => types.includes(t)) : visible;
}

export class EventService {
  private readonly settings: EventSettings;

  constructor(
    private readonly em: EntityManager,
    state: RuntimeState,
  ) {
    this.settings = state.get(EVENT_SETTINGS);
  }

  /**
   * Committed events of the community after `after`, oldest first in commit order:
   * ordered by (position, seq), where a transaction's position is taken at its commit under
   * one lock (see the events migration), so no event can later appear before a served one.
   */
  async feed(communityId: string, scopes: Set<string>, args: { after?: string | null; limit?: number | null; types?: string[] | null }): Promise<EventPage> {
    const limit = args.limit ?? DEFAULT_LIMIT;
    new Checks().int('limit', limit, { min: 1, max: MAX_LIMIT }).done();
    const types = typesFor(scopes, args.types);
    let from = { position: '0', seq: '0' };
    if (args.after != null) {
      const gone = () => new AppError('GONE', `after names an event older than the retention period of ${this.settings.retentionDays} days; read the feed again without after`, [{ path: ['after'], detail: 'the event is no longer kept' }]);
      const place = idPlace(args.after);
      // One statement: when the event's transaction committed, and the oldest position kept.
      const [found]: { committed_at: Date | null; oldest: string }[] = place
        ? await preparedRows<{ committed_at: Date | null; oldest: string }>(
            this.em,
            `select (select c.committed_at from event_commits c join events e on e.txid = c.txid and e.community_id = c.community_id and e.seq = ?
                      where c.community_id = ? and c.position = ?) as committed_at,
                    event_oldest_position()::text as oldest`,
            [place.seq, communityId, place.position],
          )
        : [];
      // A replica that has not replayed the `after` event yet: the primary answers (the feed
      // never skips, and never refuses a cursor another node handed out).
      if (!found?.committed_at && currentReplica()) return onPrimary(() => this.feed(communityId, scopes, args));
      if (!found?.committed_at) {
        const time = idTime(args.after);
        // purged: older than anything kept (or an id of the first outbox, made before retention)
        if ((time !== undefined && time < cutoff(this.settings.retentionDays).getTime()) || (place && found && BigInt(place.position) < BigInt(found.oldest))) throw gone();
        throw invalid([{ path: ['after'], detail: 'after does not name an event of this community' }]);
      }
      if (new Date(found.committed_at) < cutoff(this.settings.retentionDays)) throw gone();
      from = place!;
    }
    if (!types.length) return { results: [], limit, size: 0, hasNextPage: false, next: null };
    // Named statements (src/db/prepared.ts), like the other hot reads: parsed and planned once per connection.
    const rows = await preparedRows<EventRow>(
      this.em,
      `select ${EVENT_COLUMNS}
         from event_commits c join events e on e.txid = c.txid and e.community_id = c.community_id
        where c.community_id = ? and c.position >= ?::bigint and (c.position > ?::bigint or e.seq > ?::bigint)
          and c.committed_at >= ? and e.type = ${anyOf()}
        order by c.position, e.seq limit ?`,
      [communityId, from.position, from.position, from.seq, cutoff(this.settings.retentionDays).toISOString(), arrayOf(types), limit + 1],
    );
    const hasNextPage = rows.length > limit;
    const results = (hasNextPage ? rows.slice(0, limit) : rows).map(toEvent);
    return { results, limit, size: results.length, hasNextPage, next: hasNextPage ? results[results.length - 1].id : null };
  }
}

/**
 * The scheduled purge: the commits (and their events) and webhook deliveries older than the
 * retention period. Positions follow commit time, so everything before the first position
 * still kept goes.
 */
export async function purgeEvents(em: EntityManager, retentionDays = DEFAULT_EVENT_SETTINGS.retentionDays): Promise<number> {
  const before = cutoff(retentionDays);
  const rows: { n: string }[] = await em.execute(
    `with cut as (select coalesce((select position from event_commits where committed_at >= ? order by position limit 1), 9223372036854775807) as p),
          gone as (delete from event_commits c using cut where c.position < cut.p returning c.txid, c.community_id),
          dropped as (delete from events e using gone g where e.txid = g.txid and e.community_id = g.community_id returning 1)
     select count(*) as n from dropped`,
    [before.toISOString()],
  );
  await em.execute('delete from webhook_deliveries where created_at < ?', [before.toISOString()]);
  return Number(rows[0].n);
}
