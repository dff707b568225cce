import type { EntityManager } from '@mikro-orm/postgresql';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../common/pagination';
import { isId } from '../../common/ids';
import { AppError, invalid, type FieldIssue } from '../../errors/app-error';
import type { Event, EventPage } from './event.entity';
import { EVENT_TYPES, visibleTypes } from './event-types';
import { eventSettings } from './settings';

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

/** The millisecond time in an id of UUID version 7 layout (event ids are), else undefined. */
function idTime(id: string): number | undefined {
  if (!isId(id) || id[14] !== '7') return undefined;
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

const cutoff = () => new Date(Date.now() - eventSettings.retentionDays * 86_400_000);

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
  constructor(private readonly em: EntityManager) {}

  /**
   * Committed events of the community after `after`, oldest first in commit order:
   * ordered by (position, seq), where a transaction's position is taken at its commit under
   * one lock (see the events migration), so no event can later appear before a served one.
   */
  async feed(communityId: string, scopes: Set<string>, args: { after?: string | null; limit?: number | null; types?: string[] | null }): Promise<EventPage> {
    const limit = args.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw invalid([{ path: ['limit'], detail: `limit must be an integer from 1 to ${MAX_LIMIT}` }]);
    const types = typesFor(scopes, args.types);
    let from = { position: '0', seq: '0' };
    if (args.after != null) {
      const gone = () => new AppError('GONE', `after names an event older than the retention period of ${eventSettings.retentionDays} days; read the feed again without after`, [{ path: ['after'], detail: 'the event is no longer kept' }]);
      const rows: { position: string; seq: string; created_at: Date }[] = isId(args.after)
        ? await this.em.execute('select position, seq, created_at from events where id = ? and community_id = ? and position is not null', [args.after.toLowerCase(), communityId])
        : [];
      if (!rows.length) {
        const time = idTime(args.after);
        if (time !== undefined && time < cutoff().getTime()) throw gone();
        throw invalid([{ path: ['after'], detail: 'after does not name an event of this community' }]);
      }
      if (new Date(rows[0].created_at) < cutoff()) throw gone();
      from = rows[0];
    }
    if (!types.length) return { results: [], limit, size: 0, hasNextPage: false, next: null };
    const rows: EventRow[] = await this.em.execute(
      `select id, type, created_at, data, changes, position, seq from events
        where community_id = ? and position is not null and (position, seq) > (?::bigint, ?::bigint)
          and type in (select jsonb_array_elements_text(?::jsonb)) and created_at >= ?
        order by position, seq limit ?`,
      [communityId, from.position, from.seq, JSON.stringify(types), cutoff().toISOString(), limit + 1],
    );
    const hasNextPage = rows.length > limit;
    const results = (hasNextPage ? rows.slice(0, limit) : rows).map(toEvent);
    return { results, limit, size: results.length, hasNextPage, next: hasNextPage ? results[results.length - 1].id : null };
  }
}

/** The smallest event id made at `time`: ids are UUID version 7, time first, so they sort by time. */
export function firstIdAt(time: Date): string {
  const hex = time.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
}

/** The scheduled purge: events (by id range, see firstIdAt) and webhook deliveries older than the retention period. */
export async function purgeEvents(em: EntityManager): Promise<number> {
  const before = cutoff();
  const rows: { n: string }[] = await em.execute(
    `with gone as (delete from events where id < ?::uuid returning 1) select count(*) as n from gone`,
    [firstIdAt(before)],
  );
  await em.execute('delete from webhook_deliveries where created_at < ?', [before.toISOString()]);
  return Number(rows[0].n);
}
