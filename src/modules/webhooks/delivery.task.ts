import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { EntityManager } from '@mikro-orm/postgresql';
import { orderedIds } from '../../common/ids';
import { arrayOf } from '../../db/sql';
import { inCommunity } from '../../db/tenancy';
import { transaction } from '../../db/transaction';
import type { TaskHandler } from '../../jobs/queue';
import { QUEUE_SCHEMA } from '../../jobs/queue';
import { eventData } from '../events/event-types';
import { EVENT_SETTINGS, type EventSettings } from '../events/settings';
import { SECRET_BOX, SecretError, type SecretBox } from '../../security/secret-box';
import { openSecret } from './webhook-secrets';
import { agents, DestinationRefused, isPublicAddress, literalAddress } from './ssrf';
import { traceCarrier } from '../../observability/spans';

export const DISPATCH_WEBHOOKS = 'webhooks:dispatch';
export const DELIVER_WEBHOOK = 'webhooks:deliver';

/** Waits before the 2nd..8th attempt, in units of the base (5 s): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_STEPS = [1, 60, 360, 1440, 3600, 7200, 7200];
/** An endpoint that has not succeeded for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 86_400_000;

/** Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the secret's bytes. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Turns the events of one committed transaction into one delivery per (enabled endpoint
 * subscribed to the type, event) and queues each. Idempotent: a re-run adds nothing twice.
 * The pairs are picked first, so each delivery gets its time-ordered id from src/common/ids.ts
 * like every other record, in event order; the insert then writes exactly those pairs.
 */
export const dispatchWebhooksTask: TaskHandler = async (payload, _helpers, { orm }) => {
  const { position, communityId } = payload as { position: number; communityId?: string };
  const em = orm.em.fork() as EntityManager;
  // One community's commit: the database holds the work to it; without one (older jobs), the job's bypass.
  const scoped = <T>(work: () => T): T => (communityId ? inCommunity(communityId, work) : work());
  await scoped(() => transaction(em, async (tem) => {
    const pairs = await tem.execute<{ endpoint_id: string; seq: string }[]>(
      `select w.id as endpoint_id, e.seq
         from event_commits c
         join events e on e.txid = c.txid and e.community_id = c.community_id
         join webhook_endpoints w on w.community_id = e.community_id and w.enabled
                                 and (w.events @> array[e.type] or w.events @> array['*'])
        where c.position = ? and (?::uuid is null or c.community_id = ?::uuid)
        order by e.seq, w.id`,
      [Number(position), communityId ?? null, communityId ?? null],
    );
    if (!pairs.length) return;
    await tem.execute(
      `with pick as (select * from unnest(?::uuid[], ?::uuid[], ?::bigint[]) as p(id, endpoint_id, seq)),
       ins as (
         insert into webhook_deliveries (id, community_id, endpoint_id, event_id, type, payload, next_attempt_at, created_at, modified_at)
         select p.id, e.community_id, p.endpoint_id, event_id(c.position, e.seq), e.type,
                json_build_object('id', event_id(c.position, e.seq), 'type', e.type, 'createdAt', event_ts(e.created_at), 'data', ${eventData('e')}, 'changes', e.changes)::text,
                now(), now(), now()
           from pick p
           join event_commits c on c.position = ? and (?::uuid is null or c.community_id = ?::uuid)
           join events e on e.txid = c.txid and e.community_id = c.community_id and e.seq = p.seq
          order by p.id
         on conflict (community_id, endpoint_id, event_id) do nothing
         returning id)
       select ${QUEUE_SCHEMA}.add_job(?, json_build_object('deliveryId', id, '_trace', ?::json), max_attempts => 25) from ins`,
      [
        arrayOf(orderedIds(pairs.length)),
        arrayOf(pairs.map((p) => p.endpoint_id)),
        arrayOf(pairs.map((p) => String(p.seq))),
        Number(position),
        communityId ?? null,
        communityId ?? null,
        DELIVER_WEBHOOK,
        JSON.stringify(traceCarrier() ?? null),
      ],
    );
  }));
};

/**
 * The webhook-signature header: the current secret's signature, then, during the overlap after
 * a rotation, the previous secret's (space-separated, new first, as Standard Webhooks allows).
 * A secret that does not decrypt fails the attempt with a message naming the key id only.
 */
function signatures(box: SecretBox, row: DeliveryRow, timestamp: number): { header: string } | { error: string } {
  try {
    const secrets = [row.secret, ...(row.previous_secret ? [row.previous_secret] : [])].map((s) => openSecret(box, row.endpoint_id, s));
    return { header: secrets.map((s) => sign(s, row.event_id, timestamp, row.payload)).join(' ') };
  } catch (err) {
    if (err instanceof SecretError) return { error: err.message };
    throw err;
  }
}

interface DeliveryRow {
  id: string;
  created_at: Date;
  event_id: string;
  payload: string;
  status: string;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  enabled: boolean;
  endpoint_id: string;
}

type Outcome = { status: number | null; error: string | null };

function post(eventSettings: EventSettings, url: URL, body: string, headers: Record<string, string>): Promise<Outcome> {
  const { http: httpAgent, https: httpsAgent } = agents(eventSettings.allowPrivateNetworks);
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'POST',
      agent: url.protocol === 'https:' ? httpsAgent : httpAgent,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'community-api-webhooks' },
      timeout: eventSettings.timeoutMs,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${eventSettings.timeoutMs} ms`)), eventSettings.timeoutMs);
    req.on('response', (res) => {
      res.resume(); // the body is not read: only the status counts; redirects are not followed
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? null, error: null });
      });
      res.on('error', () => undefined);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${eventSettings.timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve({ status: null, error: err instanceof DestinationRefused ? err.message : `request failed: ${err.message}` });
    });
    req.end(body);
  });
}

/** One attempt of one delivery; the outcome and the next attempt (if any) are written in one transaction. */
export const deliverWebhookTask: TaskHandler = async (payload, _helpers, { orm, state, metrics }) => {
  const eventSettings = state.get(EVENT_SETTINGS);
  const deliveryId = (payload as { deliveryId: string }).deliveryId;
  const em = orm.em.fork() as EntityManager;
  const [row] = await em.execute<DeliveryRow[]>(
    `select d.id, d.created_at, d.event_id, d.payload, d.status, d.attempts, w.url, w.secret,
            case when w.previous_secret_until > now() then w.previous_secret end as previous_secret, w.enabled, w.id as endpoint_id
       from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id where d.id = ?`,
    [deliveryId],
  );
  if (!row || row.status !== 'PENDING') return;
  const started = Date.now();
  let outcome: Outcome;
  if (!row.enabled) outcome = { status: null, error: 'the endpoint is disabled' };
  else {
    const url = new URL(row.url);
    const literal = literalAddress(url.hostname);
    if (!eventSettings.allowPrivateNetworks && literal !== undefined && !isPublicAddress(literal)) {
      outcome = { status: null, error: `${literal} is not a public address` };
    } else {
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = signatures(state.get(SECRET_BOX), row, timestamp);
      outcome = 'error' in signature
        ? { status: null, error: signature.error }
        : await post(eventSettings, url, row.payload, {
            'webhook-id': row.event_id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signature.header,
          });
    }
  }
  const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  // The outgoing POST carries `traceparent` (the http instrumentation, inside this job's span).
  const error = ok ? null : (outcome.error ?? `answered ${outcome.status}`);
  const attempts = row.attempts + 1;
  const step = RETRY_STEPS[attempts - 1];
  const retry = !ok && row.enabled && step !== undefined;
  const next = retry ? new Date(Date.now() + step * eventSettings.retryBaseMs) : null;
  await transaction(em, async (tem) => {
    await tem.execute(
      'insert into webhook_delivery_attempts (delivery_id, attempted_at, response_status, error, duration_ms) values (?, ?, ?, ?, ?)',
      [row.id, new Date(started).toISOString(), outcome.status, error, Date.now() - started],
    );
    await tem.execute(
      `update webhook_deliveries set attempts = ?, response_status = ?, last_error = ?, status = ?, next_attempt_at = ?, modified_at = now()
        where id = ?`,
      [attempts, outcome.status, error, ok ? 'SUCCEEDED' : retry ? 'PENDING' : 'FAILED', next?.toISOString() ?? null, row.id],
    );
    if (ok) {
      await tem.execute('update webhook_endpoints set failing_since = null where id = ? and failing_since is not null', [row.endpoint_id]);
    } else if (row.enabled) {
      await tem.execute(
        `update webhook_endpoints set failing_since = coalesce(failing_since, now()),
                enabled = case when failing_since < now() - (? * interval '1 millisecond') then false else enabled end,
                disabled_reason = case when failing_since < now() - (? * interval '1 millisecond')
                                       then 'no successful delivery for 5 days' else disabled_reason end
          where id = ?`,
        [DISABLE_AFTER_MS, DISABLE_AFTER_MS, row.endpoint_id],
      );
    }
    if (retry) {
      await tem.execute(`select ${QUEUE_SCHEMA}.add_job(?, ?::json, run_at => ?::timestamptz, max_attempts => 25)`, [
        DELIVER_WEBHOOK,
        JSON.stringify({ deliveryId: row.id, _trace: (payload as { _trace?: unknown })._trace ?? null }),
        next!.toISOString(),
      ]);
    }
  });
  metrics?.webhookDeliveries.inc({ outcome: ok ? 'succeeded' : retry ? 'retrying' : 'failed' });
  if (ok) metrics?.webhookLag.observe((Date.now() - new Date(row.created_at).getTime()) / 1000);
};
