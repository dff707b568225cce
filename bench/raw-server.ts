/**
 * The practical limit: the measured REST routes hand-written on node:http + pg, running
 * the statements the service runs for them (the key lookup by hash, cached like a warm
 * key cache; the rate-limit upsert of rate-limiter-flexible's RateLimiterPostgres; the
 * data queries) as prepared statements, and answering the same JSON. No framework, no
 * validation beyond what these requests need, no logging. Not a product: a yardstick.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { Pool } from 'pg';

const db = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const rl = new Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
const BASE = process.env.PUBLIC_BASE_URL!;
const HOUR_MS = 3_600_000;

// The statement of RateLimiterPostgres._upsert (rate-limiter-flexible 11), same text up to whitespace.
const UPSERT = `
            INSERT INTO "rate_limits" VALUES ($1, $2, $3)
              ON CONFLICT(key) DO UPDATE SET
                points = CASE
                          WHEN ("rate_limits".expire <= $4 OR 1=0) THEN $2
                          ELSE "rate_limits".points + ($2)
                         END,
                expire =  CASE
             WHEN "rate_limits".expire <= $4 THEN $3
             ELSE "rate_limits".expire
            END 
            RETURNING points, expire;`;

type Key = { id: string; communityId: string; limit: number };
const keys = new Map<string, Key>();

async function authenticate(plain: string): Promise<Key | undefined> {
  const hash = createHash('sha256').update(plain, 'utf8').digest('hex');
  let key = keys.get(hash);
  if (!key) {
    const { rows } = await db.query({
      name: 'find-api-key',
      text: 'select id, community_id, key_hash, scopes, rate_limit_per_hour, revoked_at from api_keys where key_hash = $1',
      values: [hash],
    });
    if (!rows[0]) return undefined;
    key = { id: rows[0].id, communityId: rows[0].community_id, limit: rows[0].rate_limit_per_hour ?? 1000 };
    keys.set(hash, key);
  }
  return key;
}

const iso = (d: Date) => d.toISOString();
const group = (r: any) => ({
  id: r.id, externalId: r.external_id, name: r.name, about: r.about, color: r.color, membershipCount: r.membership_count,
  isVisibleInApp: r.is_visible_in_app, state: r.state, createdAt: iso(r.created_at), modifiedAt: iso(r.modified_at),
});
const membership = (r: any, ext: Map<string, string | null>) => ({
  id: r.id, externalId: r.external_id, memberId: r.member_id, memberExternalId: ext.get(r.member_id) ?? null, title: r.title,
  orderNumber: r.order_number, role: r.role, createdAt: iso(r.created_at), modifiedAt: iso(r.modified_at),
});

/** The list envelope of links.ts: self absolute, next/prev relative, query kept. */
function listBody(url: URL, rows: unknown[], limit: number, skip: number) {
  const more = rows.length > limit;
  const results = more ? rows.slice(0, limit) : rows;
  const q = url.searchParams;
  const at = (n: number) => {
    const p = new URLSearchParams(q);
    p.set('skip', String(n));
    p.set('limit', String(limit));
    return `${url.pathname}?${p}`;
  };
  const _links = {
    base: BASE,
    self: `${BASE}${url.pathname}${q.size ? `?${q}` : ''}`,
    ...(more ? { next: at(skip + limit) } : {}),
    ...(skip > 0 ? { prev: at(Math.max(0, skip - limit)) } : {}),
  };
  return { results, _links, limit, skip, size: results.length };
}

const GROUP_BY = { id: 'id', externalId: 'external_id' } as const;

async function route(req: http.IncomingMessage, url: URL, key: Key, body: string): Promise<[number, unknown]> {
  const parts = url.pathname.split('/').slice(3); // ['', 'api', 'v1', ...]
  const cid = key.communityId;
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const skip = Number(url.searchParams.get('skip') ?? 0);
  if (parts[0] !== 'groups') return [404, { status: 404 }];
  if (parts.length === 1 && req.method === 'GET') {
    const { rows } = await db.query({
      name: 'groups-page',
      text: 'select * from groups where community_id = $1 order by created_at asc, id asc limit $2 offset $3',
      values: [cid, limit + 1, skip],
    });
    return [200, listBody(url, rows.map(group), limit, skip)];
  }
  if (parts.length === 1 && req.method === 'POST') {
    const input = JSON.parse(body);
    if (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > 256) return [400, { status: 400 }];
    const now = new Date();
    const id = randomUUID();
    const client = await db.connect();
    try {
      await client.query('begin');
      await client.query({
        name: 'group-insert',
        text: `insert into groups (id, community_id, external_id, name, about, color, membership_count, is_visible_in_app, state, created_at, modified_at)
               values ($1, $2, $3, $4, $5, $6, 0, $7, 'ORIGINAL', $8, $8)`,
        values: [id, cid, input.externalId ?? null, input.name, input.about ?? null, input.color ?? null, input.isVisibleInApp ?? true, now],
      });
      await client.query('commit');
    } finally {
      client.release();
    }
    return [201, { id, externalId: input.externalId ?? null }];
  }
  const by = url.searchParams.get(parts.length === 2 ? 'key' : 'groupsKey') === 'externalId' ? 'externalId' : 'id';
  const found = await db.query({
    name: `group-by-${by}`,
    text: `select * from groups where ${GROUP_BY[by]} = $1 and community_id = $2 limit 1`,
    values: [parts[1], cid],
  });
  if (!found.rows[0]) return [404, { status: 404 }];
  if (parts.length === 2) return [200, group(found.rows[0])];
  if (parts[2] !== 'memberships') return [404, { status: 404 }];
  const byOrder = url.searchParams.get('sort') === 'orderNumber';
  const page = await db.query({
    name: `memberships-page-${byOrder}`,
    text: `select * from group_memberships where community_id = $1 and group_id = $2
           order by ${byOrder ? 'order_number asc, ' : ''}created_at asc, id asc limit $3 offset $4`,
    values: [cid, found.rows[0].id, limit + 1, skip],
  });
  // The service's member loader: every member of the page in one statement.
  const members = await db.query({
    name: 'members-by-ids',
    text: 'select * from members where id = any($1::uuid[]) and community_id = $2',
    values: [[...new Set(page.rows.map((r) => r.member_id))], cid],
  });
  const ext = new Map(members.rows.map((m) => [m.id as string, m.external_id as string | null]));
  return [200, listBody(url, page.rows.map((r) => membership(r, ext)), limit, skip)];
}

function send(res: http.ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const url = new URL(req.url!, BASE);
      if (url.pathname === '/health') return send(res, 200, { status: 'ok' });
      const key = await authenticate(String(req.headers['x-api-key'] ?? ''));
      if (!key) return send(res, 401, { status: 401 });
      const { rows } = await rl.query({ name: 'rlflx-upsert', text: UPSERT, values: [`rl-raw:${key.id}`, 1, Date.now() + HOUR_MS, Date.now()] });
      const remaining = Math.max(0, key.limit - rows[0].points);
      const headers = {
        'x-ratelimit-limit': String(key.limit),
        'x-ratelimit-remaining': String(remaining),
        'x-ratelimit-reset': String(Math.ceil(Number(rows[0].expire) / 1000)),
      };
      const [status, payload] = await route(req, url, key, Buffer.concat(chunks).toString('utf8'));
      send(res, status, payload, headers);
    } catch (err) {
      console.error(err);
      send(res, 500, { status: 500 });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), () => console.log(`raw listening on ${process.env.PORT}`));
process.on('SIGTERM', () => {
  // Requests still in flight finish before the pools close.
  server.close(() => void Promise.all([db.end(), rl.end()]).then(() => process.exit(0)));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 5000).unref();
});
