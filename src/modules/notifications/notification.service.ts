import type { EntityManager } from '@mikro-orm/postgresql';
import { transaction } from '../../db/transaction';
import { isId, orderedIds } from '../../common/ids';
import { pageWindow, toPage, type Page } from '../../common/pagination';
import { NOTIFICATION, MAX_RECIPIENTS } from '../../common/rules';
import { Checks, rejectInvalid } from '../../common/validate';
import { conflict, notFound, type FieldIssue } from '../../errors/app-error';
import { enqueue, removeJob } from '../../jobs/queue';
import { anyOf, arrayOf } from '../../db/sql';
import { Notification, NotificationStatus } from './notification.entity';
import type { CreateNotificationInput, NotificationListArgs } from './notification.inputs';

export const SEND_NOTIFICATION = 'notification_send';
export { MAX_RECIPIENTS };

/** One pending job per notification: cancelling removes it by this key. */
export const jobKeyOf = (notificationId: string) => `notification:${notificationId}`;

/**
 * Sends a SCHEDULED notification: one delivery per recipient. Runs in the caller's
 * transaction. Exactly once, whoever calls it and however often:
 * 1. the status moves SCHEDULED -> SENT with `where status = 'SCHEDULED'`; the row lock
 *    makes a concurrent caller wait and then match nothing, so only one caller goes on;
 * 2. the deliveries are inserted by that same transaction, so they exist iff SENT committed;
 * 3. unique (notification_id, member_id) + `on conflict do nothing` guard even a bug in 1.
 * Returns false when there was nothing to send (already sent, cancelled or gone).
 */
export async function deliverNotification(em: EntityManager, notificationId: string, at = new Date()): Promise<boolean> {
  const [claimed] = await em.execute<{ community_id: string }[]>(
    `update notifications set status = 'SENT', sent_at = ?, modified_at = ? where id = ? and status = 'SCHEDULED' returning community_id`,
    [at, at, notificationId],
  );
  if (!claimed) return false;
  // Time-ordered ids, as for every record (deliveries share deliveredAt; id breaks the tie).
  // Recipients only ever shrink (a member deleted), so the count read first covers them.
  const [{ n }] = await em.execute<{ n: string }[]>('select count(*) as n from notification_recipients where notification_id = ?', [notificationId]);
  await em.execute(
    `insert into notification_deliveries (id, community_id, notification_id, member_id, delivered_at)
     select (?::uuid[])[row_number() over (order by r.member_id)], r.community_id, r.notification_id, r.member_id, ?
       from notification_recipients r where r.notification_id = ?
     on conflict (community_id, notification_id, member_id) do nothing`,
    [arrayOf(orderedIds(Number(n))), at, notificationId],
  );
  // Recipients deleted since creation received nothing: the count says who did. The
  // deliveries' index leads with the community: without it (a job runs as the owner, no policy
  // adds it) the count read every community's deliveries.
  await em.execute(
    `update notifications set receivers_count = (select count(*) from notification_deliveries where community_id = ? and notification_id = ?) where id = ?`,
    [claimed.community_id, notificationId, notificationId],
  );
  return true;
}

export class NotificationService {
  constructor(private readonly em: EntityManager) {}

  async list(communityId: string, args: NotificationListArgs): Promise<Page<Notification>> {
    const { limit, skip, orderBy } = pageWindow(args);
    const where = { communityId, ...(args.status ? { status: args.status } : {}) };
    const rows = await this.em.find(Notification, where, { orderBy, limit: limit + 1, offset: skip });
    return toPage(rows, limit, skip);
  }

  /** For output (an entity, as the notification list reads them). */
  async read(communityId: string, id: string): Promise<Notification> {
    const found = isId(id) ? await this.em.findOne(Notification, { id, communityId }) : null;
    if (!found) throw notFound('Notification');
    return found;
  }

  /** Resolves the recipients (400 naming every unknown one), then sends now or schedules. */
  async create(communityId: string, input: CreateNotificationInput): Promise<Notification> {
    const ids = input.memberIds ?? [];
    const externalIds = input.memberExternalIds ?? [];
    const checks = new Checks()
      .string('title', input.title, NOTIFICATION.title)
      .string('message', input.message, NOTIFICATION.message);
    if (!ids.length && !externalIds.length) {
      checks.add(['memberIds'], 'At least one recipient is required in memberIds or memberExternalIds');
    } else if (ids.length + externalIds.length > MAX_RECIPIENTS) {
      checks.add([ids.length ? 'memberIds' : 'memberExternalIds'], `At most ${MAX_RECIPIENTS} recipients (memberIds and memberExternalIds together)`);
    }
    checks.done(['input']);

    const now = new Date();
    const dueLater = input.sendAt && input.sendAt.getTime() > now.getTime() ? input.sendAt : null;
    return transaction(this.em, async (tx) => {
      const memberIds = await this.resolveRecipients(tx, communityId, ids, externalIds);
      const notification = tx.create(Notification, {
        communityId,
        title: input.title,
        message: input.message,
        receiversCount: memberIds.length,
        sendAt: input.sendAt ?? now,
        createdAt: now,
        modifiedAt: now,
      });
      await tx.flush();
      await tx.execute(
        `insert into notification_recipients (community_id, notification_id, member_id)
         select ?, ?, unnest(?::uuid[])`,
        [notification.communityId, notification.id, arrayOf(memberIds)],
      );
      if (dueLater) {
        await enqueue(tx, SEND_NOTIFICATION, { notificationId: notification.id }, { runAt: dueLater, jobKey: jobKeyOf(notification.id) });
      } else {
        // Sent in the request's own transaction: the answer already reads SENT, and the
        // same guarded path as the scheduled job keeps it exactly once.
        await deliverNotification(tx, notification.id, now);
      }
      await tx.refresh(notification);
      return notification;
    });
  }

  /** SCHEDULED -> CANCELLED (and its job removed); CANCELLED stays; SENT is a 409. */
  async cancel(communityId: string, id: string): Promise<Notification> {
    if (!isId(id)) throw notFound('Notification');
    return transaction(this.em, async (tx) => {
      const now = new Date();
      const cancelled = await tx.execute(
        `update notifications set status = 'CANCELLED', cancelled_at = ?, modified_at = ?
          where id = ? and community_id = ? and status = 'SCHEDULED' returning id`,
        [now, now, id, communityId],
      );
      if (cancelled.length) await removeJob(tx, jobKeyOf(id));
      const notification = await tx.findOne(Notification, { id, communityId });
      if (!notification) throw notFound('Notification');
      if (notification.status === NotificationStatus.SENT) {
        throw conflict(['id'], 'The notification was already sent; only a SCHEDULED notification can be cancelled');
      }
      return notification;
    });
  }

  /** Member ids of the caller's community, deduplicated; every unknown reference is one issue. */
  private async resolveRecipients(em: EntityManager, communityId: string, ids: string[], externalIds: string[]): Promise<string[]> {
    const found = await em.execute<{ id: string; external_id: string | null }[]>(
      `select id, external_id from members where community_id = ?
          and (id = ${anyOf('uuid')} or external_id = ${anyOf()})`,
      [communityId, arrayOf(ids.filter(isId)), arrayOf(externalIds)],
    );
    const byId = new Set(found.map((m) => m.id));
    const byExternalId = new Map(found.filter((m) => m.external_id !== null).map((m) => [m.external_id!, m.id]));
    const issues: FieldIssue[] = [];
    const result = new Set<string>();
    ids.forEach((id, i) => {
      const norm = id.toLowerCase();
      if (isId(id) && byId.has(norm)) result.add(norm);
      else issues.push({ path: ['input', 'memberIds', i], detail: `No member with id "${id}" in this community` });
    });
    externalIds.forEach((externalId, i) => {
      const id = byExternalId.get(externalId);
      if (id) result.add(id);
      else issues.push({ path: ['input', 'memberExternalIds', i], detail: `No member with externalId "${externalId}" in this community` });
    });
    rejectInvalid(issues);
    return [...result];
  }
}
