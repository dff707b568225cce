import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCES, EVENT_TYPES, snapshotColumn, visibleTypes } from '../../../src/modules/events/event-types';
import type { EventSource } from '../../../src/modules/events/event-source';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { keyFor } from '../../helpers/factories';
import { gqlWith, sqlWith } from '../../helpers/jobs';
import { auth } from '../../helpers/members';

/**
 * Each resource's events are declared once, by its module (EventSource: the resource, its
 * entity, the selection its events carry); the outbox's SQL is fixed text in the migrations.
 * These tests hold the two together: the snapshot types and the capture functions are read
 * from the catalog and compared with the declaration and the entity's metadata, and every
 * resource's event `data` is compared with what its GET answers.
 */
let app: TestApp;
let t: Tenant;
let sql: ReturnType<typeof sqlWith>;

beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant();
  sql = sqlWith(app);
});
afterAll(() => app.close());

/** `a b { c d } e` -> the paths it selects: a, b, b.c, b.d, e (arguments are not used here). */
function selectionPaths(selection: string): string[] {
  const tokens = selection.match(/[{}]|\w+/g) ?? [];
  const out: string[] = [];
  const stack: string[] = [];
  let last = '';
  for (const tok of tokens) {
    if (tok === '{') stack.push(last);
    else if (tok === '}') stack.pop();
    else out.push((last = [...stack, tok].join('.')));
  }
  return out.sort();
}

/** The paths of a JSON value (an array's elements merged), as selectionPaths names them. */
function valuePaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return [...new Set(value.flatMap((v) => valuePaths(v, prefix)))];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    return [path, ...valuePaths(v, path)];
  });
}

const entityOf = (s: EventSource) => app.runtime.orm.getMetadata().find(s.entity)!;
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The columns a declared field is read from: its entity property's; for an object made of
 * properties (`icon { style unicode }` from iconStyle and iconUnicode) theirs; else (a field
 * the capture derives from other tables) its snake_case name.
 */
function columnsOf(s: EventSource, field: string): string[] {
  const props = entityOf(s).properties as Record<string, { fieldNames?: string[]; persist?: boolean; kind?: string } | undefined>;
  const column = (name: string) => {
    const prop = props[name];
    return prop?.fieldNames?.length && prop.persist !== false && prop.kind === 'scalar' ? prop.fieldNames : undefined;
  };
  const parts = selectionPaths(s.fields).filter((p) => p.startsWith(`${field}.`)).map((p) => p.slice(field.length + 1));
  const composed = parts.map((p) => column(field + p[0].toUpperCase() + p.slice(1)));
  if (parts.length && composed.every(Boolean)) return composed.flatMap((c) => c!);
  return column(field) ?? [snake(field)];
}

describe('the outbox SQL in the migrations matches each module\'s declaration', () => {
  it('event_data takes one snapshot per declared resource, in the declared order (the readers pass them so)', async () => {
    const [row] = (await sql(`select proargnames from pg_proc where proname = 'event_data' and pronamespace = 'public'::regnamespace`, [])) as { proargnames: string[] }[];
    expect(row.proargnames).toEqual(['data', ...EVENT_SOURCES.map(snapshotColumn)]);
    const columns = (await sql(`select attname::text as name from pg_attribute where attrelid = 'events'::regclass and attnum > 0 and not attisdropped`, [])) as { name: string }[];
    expect(columns.map((c) => c.name)).toEqual(expect.arrayContaining(EVENT_SOURCES.map(snapshotColumn)));
  });

  it.each(EVENT_SOURCES.map((s) => [s.resource, s] as const))('%s: its snapshot type holds exactly the columns of the declared fields', async (_, s) => {
    const attrs = (await sql(
      `select a.attname::text as name from pg_type t join pg_attribute a on a.attrelid = t.typrelid
        where t.typname = ? and a.attnum > 0 and not a.attisdropped order by a.attnum`,
      [snapshotColumn(s)],
    )) as { name: string }[];
    const fields = selectionPaths(s.fields).filter((p) => !p.includes('.'));
    expect(attrs.map((a) => a.name).sort()).toEqual(fields.flatMap((f) => columnsOf(s, f)).sort());
  });

  it.each(EVENT_SOURCES.map((s) => [s.resource, s] as const))('%s: its table has the capture triggers, and an update compares every column', async (_, s) => {
    const table = entityOf(s).tableName;
    const triggers = (await sql(`select tgname::text as name from pg_trigger where tgrelid = ?::regclass and not tgisinternal and tgname like '%_events_%' order by 1`, [table])) as { name: string }[];
    expect(triggers.map((r) => r.name)).toEqual(['del', 'ins', 'upd'].map((op) => `${table}_events_${op}`));
    const [fn] = (await sql(`select prosrc from pg_proc where proname = ?`, [`events_capture_${table}`])) as { prosrc: string }[];
    const columns = (await sql(`select attname::text as name from pg_attribute where attrelid = ?::regclass and attnum > 0 and not attisdropped`, [table])) as { name: string }[];
    // Columns whose change alone is no event: the tenant, the change stamp, a group's derived
    // count, an import's request body, a member's searched text (PostgreSQL computes it from
    // the name, address and externalId, which are compared).
    const unannounced = ['community_id', 'modified_at', 'membership_count', 'payload', 'search_text'];
    const missing = columns.map((c) => c.name).filter((c) => !unannounced.includes(c) && !fn.prosrc.includes(`n.${c} is distinct from o.${c}`));
    expect(missing, `columns of ${table} an update's changes do not compare: a new migration must re-create events_capture_${table}`).toEqual([]);
    // A reorder is told apart by one EXCEPT over every column but the order (and the tenant and
    // stamps): a column left out there would make its change look like a reorder.
    const reorder = /diffed := exists \(\s*select ([^\n]*) from new_rows n/.exec(fn.prosrc);
    if (table === 'group_memberships') {
      const compared = reorder![1].split(',').map((c) => c.trim().replace(/^n\./, ''));
      const expected = columns.map((c) => c.name).filter((c) => !['community_id', 'order_number', 'created_at', 'modified_at'].includes(c));
      expect(compared.sort()).toEqual(expected.sort());
    } else {
      expect(reorder).toBeNull();
    }
  });
});

/** How to make one record of a resource and read it back as its API answers (the REST GET, or GraphQL where no GET exists). */
interface Case {
  create(): Promise<{ id: string; read(): Promise<Record<string, unknown>> }>;
  /** Fields the event carries that its GET does not (it names them in its path). */
  eventOnly?: string[];
  /** Fields the GET answers that are not part of the record (its import's row errors). */
  getOnly?: string[];
}

const post = async (path: string, body: object) => {
  const res = await app.http.post(`/api/v1${path}`).set(auth(t)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body as { id: string };
};
const get = (path: string) => async () => {
  const res = await app.http.get(`/api/v1${path}`).set(auth(t));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const CASES: Record<string, Case> = {
  group: {
    create: async () => {
      const { id } = await post('/groups', { name: 'Shape', externalId: 'shape', about: 'All of it', color: '#112233' });
      return { id, read: get(`/groups/${id}`) };
    },
  },
  group_membership: {
    eventOnly: ['groupId'],
    create: async () => {
      const group = await post('/groups', { name: 'Shape members' });
      const member = await post('/members', { externalId: 'shape-member' });
      const { id } = await post(`/groups/${group.id}/memberships`, { memberId: member.id, externalId: 'shape-ms', title: 'Chair' });
      return { id, read: get(`/groups/${group.id}/memberships/${id}`) };
    },
  },
  member: {
    create: async () => {
      const field = await post('/additional_fields', { name: 'Shape phone', type: 'TEXT' });
      const { id } = await post('/members', { externalId: 'shape-full', firstName: 'Ada', lastName: 'L', emailAddress: 'ada-shape@example.com', additionalFields: [{ id: field.id, value: '1' }] });
      return { id, read: get(`/members/${id}`) };
    },
  },
  additional_field: {
    create: async () => {
      const { id } = await post('/additional_fields', { name: 'Shape icon', type: 'TEXT', placeholder: 'p', icon: { style: 'REGULAR', unicode: 'f095' } });
      return { id, read: get(`/additional_fields/${id}`) };
    },
  },
  notification: {
    create: async () => {
      const member = await post('/members', { externalId: 'shape-reader' });
      const { id } = await post('/notifications', { title: 'Shape', message: 'Later', memberIds: [member.id], sendAt: '2099-01-01T00:00:00.000Z' });
      const fields = EVENT_SOURCES.find((s) => s.resource === 'notification')!.fields;
      return {
        id,
        read: async () => {
          const res = await gqlWith(app)(`query($id: ID!) { notification(id: $id) { ${fields} } }`, { id }, t.key);
          expect(res.errors).toBeUndefined();
          return res.data.notification;
        },
      };
    },
  },
  import_job: {
    getOnly: ['errors'],
    create: async () => {
      const { id } = await post('/triggers/groups/import', { groups: [{ externalId: 'shape-imp', name: 'Imported' }] });
      return { id, read: get(`/import_jobs/${id}`) };
    },
  },
};

const omit = (o: Record<string, unknown>, keys: string[] = []) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

describe("an event's data has the shape of its resource's GET", () => {
  it('every resource that emits events has a case here', () => {
    expect(Object.keys(CASES).sort()).toEqual(EVENT_SOURCES.map((s) => s.resource).sort());
  });

  it.each(EVENT_SOURCES.map((s) => [s.resource, s] as const))('%s', async (_, s) => {
    const c = CASES[s.resource];
    const { id, read } = await c.create();
    const answered = await read();
    const res = await app.http.get(`/api/v1/events?limit=100&types=${s.resource}.created`).set(auth(t));
    expect(res.status).toBe(200);
    const event = (res.body.results as { data: Record<string, unknown> }[]).find((e) => e.data.id === id);
    expect(event, `no ${s.resource}.created event for ${id}`).toBeDefined();
    // the declaration says what the data holds ...
    expect(valuePaths(event!.data).sort()).toEqual(selectionPaths(s.fields));
    // ... and it is the record as its GET answers it, field for field
    expect(omit(event!.data, c.eventOnly)).toEqual(omit(answered, c.getOnly));
    for (const k of c.eventOnly ?? []) expect(event!.data[k]).toBeDefined();
  });
});

describe('who sees which events', () => {
  it("a resource's read scope shows its events and no other resource's", async () => {
    for (const s of EVENT_SOURCES) {
      expect(visibleTypes(new Set([`${s.scope}:read`])), s.resource).toEqual(EVENT_TYPES.filter((t) => t.startsWith(`${s.resource}.`)));
    }
    // through the feed (after the cases above wrote events of every resource): a key with group_memberships but not groups sees membership events only
    const key = await keyFor(app, t.communityId, ['events', 'group_memberships']);
    const res = await app.http.get('/api/v1/events?limit=100').set('X-API-Key', key);
    expect(res.status).toBe(200);
    const types = new Set((res.body.results as { type: string }[]).map((e) => e.type.split('.')[0]));
    expect([...types]).toEqual(['group_membership']);
  });
});
