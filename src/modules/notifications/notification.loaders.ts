import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, toPage, type Page, type PageArgs } from '../../common/pagination';
import type { Context } from '../../context';
import { byIds, leanByIds } from '../../db/lean';
import { anyOf, arrayOf } from '../../jobs/sql';
import { Member } from '../members/member.entity';
import { Notification, NotificationDelivery } from './notification.entity';

export interface NotificationLoaders {
  member: DataLoader<string, Member | undefined>;
  /** Notification id -> one page of its deliveries. */
  deliveries(args: PageArgs): DataLoader<string, Page<NotificationDelivery>>;
  /** Member id -> one page of the notifications addressed to it. */
  memberNotifications(args: PageArgs): DataLoader<string, Page<Notification>>;
}

/**
 * Kept beside the module rather than in src/loaders.ts: built lazily once per request
 * (the context object is per request) for the caller's community only.
 */
const perRequest = new WeakMap<Context, NotificationLoaders>();

export function notificationLoaders(ctx: Context): NotificationLoaders {
  let loaders = perRequest.get(ctx);
  if (!loaders) {
    const communityId = ctx.caller?.kind === 'key' ? ctx.caller.communityId : '00000000-0000-0000-0000-000000000000';
    loaders = createLoaders(ctx.em, communityId);
    perRequest.set(ctx, loaders);
  }
  return loaders;
}

/** One DataLoader per distinct page arguments, so each batch shares one window. */
function paged<T>(load: (ids: readonly string[], limit: number, skip: number) => Promise<Page<T>[]>) {
  const loaders = new Map<string, DataLoader<string, Page<T>>>();
  return (args: PageArgs) => {
    const { limit, skip } = pageWindow(args); // bad limit/skip: a 400 on this field
    const key = `${limit}:${skip}`;
    let loader = loaders.get(key);
    if (!loader) loaders.set(key, (loader = new DataLoader((ids) => load(ids, limit, skip))));
    return loader;
  };
}

/**
 * Pages of many owners in one statement: row_number() numbers each owner's rows and the
 * window skip+1..skip+limit+1 is kept (the extra row tells whether a next page exists).
 */
type OwnedRow = Record<string, unknown> & { owner: string; rn: unknown };

function group<T>(ids: readonly string[], rows: OwnedRow[], map: (row: Record<string, unknown>) => T, limit: number, skip: number) {
  const byOwner = new Map<string, T[]>(ids.map((id) => [id, []]));
  for (const { owner, rn: _rn, ...row } of rows) byOwner.get(owner)?.push(map(row));
  return ids.map((id) => toPage(byOwner.get(id) ?? [], limit, skip));
}

function createLoaders(em: EntityManager, communityId: string): NotificationLoaders {
  return {
    member: new DataLoader(async (ids) => byIds(await leanByIds(em, Member, communityId, ids), ids)),
    deliveries: paged(async (ids, limit, skip) => {
      const rows = await em.execute<OwnedRow[]>(
        `select * from (
           select d.*, d.notification_id as owner, row_number() over (partition by d.notification_id order by d.delivered_at, d.id) as rn
             from notification_deliveries d join notifications n on n.id = d.notification_id
            where n.community_id = ? and d.notification_id = ${anyOf('uuid')}
         ) t where t.rn > ? and t.rn <= ? order by t.owner, t.rn`,
        [communityId, arrayOf(ids), skip, skip + limit + 1],
      );
      return group(ids, rows, (row) => em.map(NotificationDelivery, row), limit, skip);
    }),
    memberNotifications: paged(async (ids, limit, skip) => {
      const rows = await em.execute<OwnedRow[]>(
        `select * from (
           select n.*, r.member_id as owner, row_number() over (partition by r.member_id order by n.created_at, n.id) as rn
             from notification_recipients r join notifications n on n.id = r.notification_id
            where n.community_id = ? and r.member_id = ${anyOf('uuid')}
         ) t where t.rn > ? and t.rn <= ? order by t.owner, t.rn`,
        [communityId, arrayOf(ids), skip, skip + limit + 1],
      );
      return group(ids, rows, (row) => em.map(Notification, row), limit, skip);
    }),
  };
}
