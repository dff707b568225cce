import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { median, timeOnce, type HttpRequest } from './load';
import { bulkBody } from './ops';
import type { Seeded } from './seed';

/** The outbox's cost and the webhook delivery rate (docs/events.md); reported, not asserted. */
export interface EventsBench {
  groupPost: Paired;
  bulk: Paired;
  /** PostgreSQL time in the outbox's functions per request (pg_stat_user_functions), when it could be read. */
  inDatabase?: { groupPostUs: number; bulkUs: number; functions: { name: string; calls: number; selfUs: number }[] };
  delivery: { events: number; seconds: number; perSecond: number };
  /** Whether on and off ran side by side (two services, requests interleaved) or in alternating rounds. */
  interleaved?: boolean;
}

/** Requests with the outbox on and off (see timeEvents for how they are paired). */
export interface Paired {
  onMs: number[];
  offMs: number[];
  onMedian: number;
  offMedian: number;
  /** Median over the pairs of rounds of (median on / median off - 1): the machine's slow drift cancels out. */
  pairedOverhead: number;
}

/** A service and its database: the outbox's triggers are switched in the database. */
export interface EventsTarget {
  url: string;
  key: string;
  dbUrl: string;
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
/** Bulks per round: a pair of rounds is compared by their medians, not by one bulk each. */
const BULKS_PER_ROUND = 3;

const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });

async function ok(url: string, req: HttpRequest): Promise<{ ms: number; text: string }> {
  const res = await timeOnce(url, req);
  if (res.status >= 300) throw new Error(`bench events: ${req.method} ${req.path} answered ${res.status}: ${res.text.slice(0, 200)}`);
  return res;
}

/** POST /groups with this name: the request's time and the new group's id. */
async function postGroup(url: string, key: string, name: string): Promise<{ ms: number; id: string }> {
  const res = await ok(url, { method: 'POST', path: '/api/v1/groups', headers: json(key), body: JSON.stringify({ name }) });
  return { ms: res.ms, id: JSON.parse(res.text).id };
}

/** Each pair's overhead (median of its on requests over the median of its off ones) and their median. */
function paired(pairs: { on: number[]; off: number[] }[]): Paired {
  const onMs = pairs.flatMap((p) => p.on);
  const offMs = pairs.flatMap((p) => p.off);
  const ratios = pairs.map((p) => median(p.on) / median(p.off) - 1);
  return { onMs, offMs, onMedian: median(onMs), offMedian: median(offMs), pairedOverhead: median(ratios) };
}

type FunctionTimes = Record<string, { calls: number; selfMs: number }>;

async function functionTimes(db: Client): Promise<FunctionTimes> {
  const { rows } = await db.query(`select funcname, calls, self_time from pg_stat_user_functions where funcname like 'events\\_%'`);
  return Object.fromEntries(rows.map((r) => [r.funcname, { calls: Number(r.calls), selfMs: Number(r.self_time) }]));
}

// A backend reports its function statistics within about 10 s of going idle (PGSTAT_IDLE_INTERVAL).
const STATS_FLUSH_MS = 11_000;

/**
 * The outbox's own time in PostgreSQL, measured where it runs (the service's connections, its
 * caches as cold as between real requests): with track_functions = 'pl', the self time of
 * the capture and commit functions over `groupReps` POST /groups and `bulkReps` bulks.
 * Undefined when the server does not let the bench change track_functions (not a superuser).
 */
async function timeInDatabase(url: string, key: string, s: Seeded, dbUrl: string, groupReps: number, bulkReps: number): Promise<EventsBench['inDatabase']> {
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    try {
      await db.query(`alter system set track_functions = 'pl'`);
      await db.query('select pg_reload_conf()');
    } catch {
      return undefined;
    }
    const delta = (a: FunctionTimes, b: FunctionTimes) =>
      Object.entries(b).map(([name, v]) => ({ name, calls: v.calls - (a[name]?.calls ?? 0), selfUs: (v.selfMs - (a[name]?.selfMs ?? 0)) * 1000 }));
    const total = (d: { calls: number; selfUs: number }[]) => d.reduce((t, f) => t + f.selfUs, 0);
    for (let i = 0; i < WARM_POSTS; i++) await postGroup(url, key, `Outbox time warm ${i}`);
    await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
    const t0 = await functionTimes(db);
    for (let i = 0; i < groupReps; i++) await postGroup(url, key, `Outbox time ${i}`);
    await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
    const t1 = await functionTimes(db);
    for (let i = 0; i < bulkReps; i++) {
      const group = (await postGroup(url, key, `Outbox time bulk ${i}`)).id;
      await ok(url, { method: 'POST', path: `/api/v1/groups/${group}/memberships/_bulk`, headers: json(key), body: JSON.stringify(bulkBody(s.memberIds, 1000, `outbox-time-${i}`)) });
    }
    await new Promise((r) => setTimeout(r, STATS_FLUSH_MS));
    const t2 = await functionTimes(db);
    const posts = delta(t0, t1);
    // A backend's statistics are reported together (calls and time), so a request's share is
    // the time over the calls reported of the function called once per request.
    const perPost = (posts.find((f) => f.name === 'events_capture_groups')?.calls ?? 0) || 1;
    const bulks = delta(t1, t2);
    const perBulk = (bulks.find((f) => f.name === 'events_capture_group_memberships')?.calls ?? 0) || 1;
    // Each bulk also created its group: that POST's share is taken off.
    const groupPostUs = total(posts) / perPost;
    return {
      groupPostUs,
      bulkUs: total(bulks) / perBulk - groupPostUs,
      functions: posts.filter((f) => f.calls > 0).map((f) => ({ name: f.name, calls: f.calls, selfUs: f.selfUs / f.calls })),
    };
  } finally {
    await db.query('alter system reset track_functions').catch(() => undefined);
    await db.query('select pg_reload_conf()').catch(() => undefined);
    await db.end();
  }
}

/**
 * The outbox on and off, 2 x `bulkReps` rounds. With a `twin` (a second service over a copy
 * of the database), both run in every round, one with its outbox on and the other off, roles
 * swapped each round, and their requests interleave one by one: each round is a pair, measured
 * in the same instants (the machine's drift, which on a shared 2-core machine moved a median by
 * 10-40% between rounds, cancels), and the swap cancels any difference between the two
 * processes or databases. Without a twin (a server where the bench cannot create databases),
 * rounds alternate on and off on the one service and consecutive rounds make a pair.
 * Each round, per service: `groupReps` POST /groups and BULKS_PER_ROUND bulks of 1,000
 * memberships. Then the delivery rate: one bulk of 1,000 memberships with a webhook endpoint
 * on a local receiver.
 */
export async function timeEvents(main: EventsTarget, twin: EventsTarget | undefined, s: Seeded, groupReps: number, bulkReps: number): Promise<EventsBench> {
  const targets = twin ? [main, twin] : [main];
  const groupPost: { on: number[]; off: number[] }[] = [];
  const bulk: { on: number[]; off: number[] }[] = [];
  try {
    for (let round = 0; round < 2 * bulkReps; round += 2) {
      for (const half of [0, 1]) {
        // target i has its outbox on when (round + half + i) is even
        const on = targets.map((_, i) => (round + half + i) % 2 === 0);
        for (const [i, t] of targets.entries()) await outbox(t.dbUrl, on[i]);
        // Switching the triggers (ALTER TABLE) drops every connection's cached plans: PostgreSQL
        // then plans the trigger's statements afresh for each of the pool's connections, five
        // times each before it settles on a generic plan. WARM_POSTS requests after a switch
        // are not measured, so the steady state is (the pool has 10 connections).
        for (let i = 0; i < WARM_POSTS; i++) for (const t of targets) await postGroup(t.url, t.key, `Outbox warm ${round} ${half} ${i}`);
        if (twin || !half) {
          groupPost.push({ on: [], off: [] });
          bulk.push({ on: [], off: [] });
        }
        const posts = groupPost[groupPost.length - 1];
        const bulks = bulk[bulk.length - 1];
        // one by one, the first of each pair alternating
        const turn = (k: number) => (k % 2 ? [...targets.keys()].reverse() : [...targets.keys()]);
        for (let k = 0; k < groupReps; k++) {
          for (const i of turn(k)) (on[i] ? posts.on : posts.off).push((await postGroup(targets[i].url, targets[i].key, `Outbox ${round} ${half} ${k}`)).ms);
        }
        for (let b = 0; b < BULKS_PER_ROUND; b++) {
          for (const i of turn(b)) {
            const t = targets[i];
            const group = (await postGroup(t.url, t.key, `Outbox bulk ${round} ${half} ${b}`)).id;
            const body = JSON.stringify(bulkBody(s.memberIds, 1000, `outbox-${round}-${half}-${b}`));
            (on[i] ? bulks.on : bulks.off).push((await ok(t.url, { method: 'POST', path: `/api/v1/groups/${group}/memberships/_bulk`, headers: json(t.key), body })).ms);
          }
        }
      }
    }
  } finally {
    for (const t of targets) await outbox(t.dbUrl, true);
  }
  const { url, key } = main;
  const inDatabase = await timeInDatabase(url, key, s, main.dbUrl, groupReps, Math.min(bulkReps, 5));

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
    const group = (await postGroup(url, key, 'Delivery bench')).id;
    const started = Date.now();
    await ok(url, { method: 'POST', path: `/api/v1/groups/${group}/memberships/_bulk`, headers: json(key), body: JSON.stringify(bulkBody(s.memberIds, 1000, 'delivery')) });
    for (const end = Date.now() + 300_000; received < 1000 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    await ok(url, { method: 'DELETE', path: `/api/v1/webhook_endpoints/${endpoint.id}`, headers: json(key) });
    const seconds = ((received ? last : Date.now()) - started) / 1000;
    return {
      groupPost: paired(groupPost),
      bulk: paired(bulk),
      interleaved: Boolean(twin),
      inDatabase,
      delivery: { events: received, seconds, perSecond: received / seconds },
    };
  } finally {
    server.close();
  }
}
