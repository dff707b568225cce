import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { median, timeOnce, type HttpRequest } from './load';
import { bulkBody } from './ops';
import type { Seeded } from './seed';

/** The outbox's cost and the webhook delivery rate (docs/events.md); reported, not asserted. */
export interface EventsBench {
  groupPost: { onMs: number[]; offMs: number[]; onMedian: number; offMedian: number };
  bulk: { onMs: number[]; offMs: number[]; onMedian: number; offMedian: number };
  delivery: { events: number; seconds: number; perSecond: number };
}

const TRIGGERS = ['groups', 'group_memberships', 'members', 'additional_fields', 'notifications', 'import_jobs', 'member_field_values'].flatMap((t) =>
  ['ins', 'upd', 'del'].map((op) => [t, `${t}_events_${op}`]),
);

/** Turns the outbox triggers (only those) off or on, for the paired comparison. */
async function outbox(dbUrl: string, on: boolean) {
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    for (const [table, trigger] of TRIGGERS) await db.query(`alter table ${table} ${on ? 'enable' : 'disable'} trigger ${trigger}`);
  } finally {
    await db.end();
  }
}

const WARM_POSTS = 80;

const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });

async function ok(url: string, req: HttpRequest): Promise<{ ms: number; text: string }> {
  const res = await timeOnce(url, req);
  if (res.status >= 300) throw new Error(`bench events: ${req.method} ${req.path} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res;
}

/**
 * Paired runs with the outbox on and off (alternating, the same requests): `groupReps`
 * sequential POST /groups and `bulkReps` bulks of 1,000 memberships. Then the delivery rate:
 * one bulk of 1,000 memberships with a webhook endpoint on a local receiver.
 */
export async function timeEvents(url: string, key: string, s: Seeded, dbUrl: string, groupReps: number, bulkReps: number): Promise<EventsBench> {
  const groupPost = { onMs: [] as number[], offMs: [] as number[] };
  const bulk = { onMs: [] as number[], offMs: [] as number[] };
  try {
    for (let round = 0; round < 2 * bulkReps; round++) {
      const on = round % 2 === 0;
      await outbox(dbUrl, on);
      // Switching the triggers (ALTER TABLE) drops every connection's cached plans: PostgreSQL
      // then plans the trigger's statements afresh for each of the pool's connections, five
      // times each before it settles on a generic plan. WARM_POSTS requests after a switch
      // are not measured, so the steady state is (the pool has 10 connections).
      for (let i = 0; i < WARM_POSTS + groupReps; i++) {
        const r = await ok(url, { method: 'POST', path: '/api/v1/groups', headers: json(key), body: JSON.stringify({ name: `Outbox ${round} ${i}` }) });
        if (i >= WARM_POSTS) (on ? groupPost.onMs : groupPost.offMs).push(r.ms);
      }
      const group = JSON.parse((await ok(url, { method: 'POST', path: '/api/v1/groups', headers: json(key), body: JSON.stringify({ name: `Outbox bulk ${round}` }) })).text).id;
      const body = JSON.stringify(bulkBody(s.memberIds, 1000, `outbox-${round}`));
      const r = await ok(url, { method: 'POST', path: `/api/v1/groups/${group}/memberships/_bulk`, headers: json(key), body });
      (on ? bulk.onMs : bulk.offMs).push(r.ms);
    }
  } finally {
    await outbox(dbUrl, true);
  }

  // Delivery throughput: 1,000 events to a local receiver that answers 204 at once.
  let received = 0;
  let last = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      last = Date.now();
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  try {
    const endpoint = JSON.parse(
      (await ok(url, { method: 'POST', path: '/api/v1/webhook_endpoints', headers: json(key), body: JSON.stringify({ url: `http://127.0.0.1:${port}/bench`, events: ['group_membership.created'] }) })).text,
    );
    const group = JSON.parse((await ok(url, { method: 'POST', path: '/api/v1/groups', headers: json(key), body: JSON.stringify({ name: 'Delivery bench' }) })).text).id;
    const started = Date.now();
    await ok(url, { method: 'POST', path: `/api/v1/groups/${group}/memberships/_bulk`, headers: json(key), body: JSON.stringify(bulkBody(s.memberIds, 1000, 'delivery')) });
    for (const end = Date.now() + 300_000; received < 1000 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    await ok(url, { method: 'DELETE', path: `/api/v1/webhook_endpoints/${endpoint.id}`, headers: json(key) });
    const seconds = ((received ? last : Date.now()) - started) / 1000;
    return {
      groupPost: { ...groupPost, onMedian: median(groupPost.onMs), offMedian: median(groupPost.offMs) },
      bulk: { ...bulk, onMedian: median(bulk.onMs), offMedian: median(bulk.offMs) },
      delivery: { events: received, seconds, perSecond: received / seconds },
    };
  } finally {
    server.close();
  }
}
