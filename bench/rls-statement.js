/**
 * What row-level security's setting costs one statement, by path (docs/security.md, "Row-level
 * security: measured"): PostgreSQL backend CPU (from /proc/<pid>/stat) and client CPU per
 * statement, arms interleaved on one connection each. Not part of `npm run bench`; run on a
 * PostgreSQL you may create a database `rlsmicro` on (superuser):
 *   RLS_MICRO_URL=postgres://postgres@127.0.0.1:5432 N=3000 ROUNDS=4 node bench/rls-statement.js
 * Arms: norls (owner, named statement), old (simple query set_config + EXECUTE, the previous
 * design), onewrite (the extended-protocol pipeline of src/db/tenancy.ts), set_norls / owner_nor
 * (a table without the policy), *_gen (plan_cache_mode = force_generic_plan), and the
 * transaction paths trx_norls / trx_old / trx_exec / trx_pipe (ARMS=a,b,... picks; STMT_ONLY=1
 * skips the transaction arms).
 */
// Micro-measurement of the tenancy statement path: PostgreSQL backend CPU (from /proc) and client CPU per statement.
const fs = require('fs');
const { Client } = require('pg');
const PgQuery = require('pg/lib/query');
const { prepareValue } = require('pg/lib/utils');
const SERVER = process.env.RLS_MICRO_URL || 'postgres://postgres@127.0.0.1:5432';
const URL = `${SERVER}/rlsmicro`;
const TICK = 100; // clock ticks per second

class TenantQuery extends PgQuery {
  constructor(config, setting, after) { super(config); this.setting = setting; this.pending = true; this.after = after; }
  submit(c) {
    const mapped = (this.values || []).map((v) => prepareValue(v));
    c.stream.cork && c.stream.cork();
    const set = () => { c.bind({ statement: 't_set', values: this.setting }); c.execute(); };
    if (!this.after) set();
    if (!this.hasBeenParsed(c)) c.parse({ text: this.text, name: this.name, types: this.types });
    c.bind({ portal: this.portal, statement: this.name, values: mapped, binary: this.binary });
    c.describe({ type: 'P', name: '' });
    c.execute({ portal: this.portal });
    if (this.after) set();
    c.sync();
    c.stream.uncork && c.stream.uncork();
    return null;
  }
  handleDataRow(m) { if (this.after ? !this.stmtDone : !this.pending) super.handleDataRow(m); }
  handleCommandComplete(m, c) {
    if (this.after) { if (this.stmtDone) return; this.stmtDone = true; return super.handleCommandComplete(m, c); }
    if (this.pending) this.pending = false; else super.handleCommandComplete(m, c);
  }
}
const { serialize } = require('pg-protocol');
const SYNC = serialize.sync();
const setCache = new Map();
class OneWrite extends TenantQuery {
  submit(c) {
    const mapped = (this.values || []).map((v) => prepareValue(v));
    const key = this.setting[1];
    let set = setCache.get(key);
    if (!set) setCache.set(key, (set = Buffer.concat([serialize.bind({ statement: 't_set', values: this.setting }), serialize.execute()])));
    const parts = [set];
    if (!this.hasBeenParsed(c)) parts.push(serialize.parse({ text: this.text, name: this.name, types: this.types }));
    parts.push(serialize.bind({ portal: this.portal, statement: this.name, values: mapped, binary: this.binary }), serialize.describe({ type: 'P', name: '' }), serialize.execute(), SYNC);
    c.stream.write(Buffer.concat(parts));
    return null;
  }
}
const run = (client, q) => new Promise((res, rej) => { q.callback = (e, r) => (e ? rej(e) : res(r)); client.query(q); });

function cpuOf(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK; // utime + stime, seconds
}

async function main() {
  const admin = new Client({ connectionString: `${SERVER}/postgres` });
  await admin.connect();
  await admin.query('drop database if exists rlsmicro');
  await admin.query('create database rlsmicro');
  await admin.end();
  const owner = new Client({ connectionString: URL });
  await owner.connect();
  await owner.query(`
    do $$ begin create role micro_service nologin noinherit nobypassrls; exception when duplicate_object then null; end $$;
    create table groups (id uuid primary key default gen_random_uuid(), community_id uuid not null, name text not null, created_at timestamptz not null default clock_timestamp(), modified_at timestamptz not null default now(), membership_count int not null default 0);
    create index groups_community_created on groups (community_id, created_at, id);
    alter table groups enable row level security; alter table groups force row level security;
    create policy tenant_isolation on groups using (community_id = (select nullif(current_setting('app.community_id', true), '')::uuid));
    grant select, insert, update, delete on groups to micro_service;
    insert into groups (community_id, name) select c, 'Group ' || i from (values ('11111111-1111-4111-8111-111111111111'::uuid), ('22222222-2222-4222-8222-222222222222'::uuid)) v(c), generate_series(1, 5000) i;
    analyze groups;
    create table groups_nor as select * from groups; create index on groups_nor (community_id, created_at, id); analyze groups_nor;
    grant select on groups_nor to micro_service;`);
  await owner.end();
  const C = '11111111-1111-4111-8111-111111111111';
  const TEXT = 'select id, community_id, name, created_at, modified_at, membership_count from groups where community_id = $1 and (created_at, id) > ($2, $3) order by created_at, id limit $4';
  const VALUES = [C, new Date(0), '00000000-0000-0000-0000-000000000000', 21];
  const lit = (c, v) => { const p = prepareValue(v); return p === null ? 'null' : c.escapeLiteral(String(p)); };

  const arms = {};
  async function client(service) {
    const c = new Client({ connectionString: URL }); await c.connect();
    if (service) await c.query(`set role micro_service; prepare t_set(text, text) as select set_config($1, $2, true)`);
    c.pid = (await c.query('select pg_backend_pid() as p')).rows[0].p;
    return c;
  }
  arms.norls = { c: await client(false), one: (c) => c.query({ name: 's_list', text: TEXT, values: VALUES }) };
  let prepared = false;
  arms.old = { c: await client(true), one: async (c) => {
    const prep = prepared ? '' : `prepare t_x as ${TEXT}; `; prepared = true;
    const r = await c.query(`select set_config('app.community_id', '${C}', true); ${prep}execute t_x(${VALUES.map((v) => lit(c, v)).join(', ')})`);
    return r[r.length - 1];
  } };
  let prepared2 = false;
  arms.old_exec = { c: await client(true), one: async (c) => {
    const prep = prepared2 ? '' : `prepare t_x as ${TEXT}; `; prepared2 = true;
    const r = await c.query(`execute t_set('app.community_id', '${C}'); ${prep}execute t_x(${VALUES.map((v) => lit(c, v)).join(', ')})`);
    return r[r.length - 1];
  } };
  arms.pipeline = { c: await client(true), one: (c) => run(c, new TenantQuery({ name: 's_list', text: TEXT, values: VALUES }, ['app.community_id', C], false)) };
  arms.onewrite = { c: await client(true), one: (c) => run(c, new OneWrite({ name: 's_list', text: TEXT, values: VALUES }, ['app.community_id', C], false)) };
  const TEXT_NOR = TEXT.replace('from groups', 'from groups_nor');
  arms.set_norls = { c: await client(true), one: (c) => run(c, new OneWrite({ name: 's_nor', text: TEXT_NOR, values: VALUES }, ['app.community_id', C], false)) };
  arms.svc_nor = { c: await client(true), one: (c) => c.query({ name: 's_nor', text: TEXT_NOR, values: VALUES }) };
  arms.owner_nor = { c: await client(false), one: (c) => c.query({ name: 's_nor', text: TEXT_NOR, values: VALUES }) };
  arms.onewrite_gen = { c: await client(true), one: (c) => run(c, new OneWrite({ name: 's_list', text: TEXT, values: VALUES }, ['app.community_id', C], false)) };
  await arms.onewrite_gen.c.query('set plan_cache_mode = force_generic_plan');
  arms.norls_gen = { c: await client(false), one: (c) => c.query({ name: 's_list', text: TEXT, values: VALUES }) };
  await arms.norls_gen.c.query('set plan_cache_mode = force_generic_plan');
  if (process.env.STMT_ONLY) { /* statements only */ } else {
  // transaction path
  arms.trx_norls = { c: await client(false), one: async (c) => { await c.query('begin'); const r = await c.query({ name: 's_list', text: TEXT, values: VALUES }); await c.query('commit'); return r; } };
  arms.trx_old = { c: await client(true), one: async (c) => { await c.query(`begin; select set_config('app.community_id', '${C}', true)`); const r = await c.query({ name: 's_list', text: TEXT, values: VALUES }); await c.query('commit'); return r; } };
  arms.trx_exec = { c: await client(true), one: async (c) => { await c.query(`begin; execute t_set('app.community_id', '${C}')`); const r = await c.query({ name: 's_list', text: TEXT, values: VALUES }); await c.query('commit'); return r; } };
  arms.trx_pipe = { c: await client(true), one: async (c) => { await run(c, new TenantQuery({ text: 'begin' }, ['app.community_id', C], true)); const r = await c.query({ name: 's_list', text: TEXT, values: VALUES }); await c.query('commit'); return r; } };

  }
  const keep = (process.env.ARMS || 'norls,old,onewrite,trx_norls,trx_old,trx_exec,trx_pipe').split(',');
  for (const n of Object.keys(arms)) if (!keep.includes(n)) delete arms[n];
  // sanity: same rows
  for (const [n, a] of Object.entries(arms)) { const r = await a.one(a.c); if (r.rows.length !== 21 || !(r.rows[0].created_at instanceof Date)) throw new Error(`${n}: ${r.rows.length}`); a.pg = 0; a.node = 0; a.n = 0; }
  const N = Number(process.env.N || 2000), ROUNDS = Number(process.env.ROUNDS || 5);
  const names = Object.keys(arms);
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const a = arms[names[(k + round) % names.length]];
      for (let i = 0; i < 200; i++) await a.one(a.c); // warm
      const pg0 = cpuOf(a.c.pid), n0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await a.one(a.c);
      const nd = process.cpuUsage(n0);
      a.pg += cpuOf(a.c.pid) - pg0; a.node += (nd.user + nd.system) / 1e6; a.n += N;
    }
  }
  for (const n of names) { const a = arms[n]; console.log(`${n.padEnd(10)} PG CPU ${(a.pg / a.n * 1000).toFixed(4)} ms/stmt   client CPU ${(a.node / a.n * 1000).toFixed(4)} ms/stmt`); }
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
