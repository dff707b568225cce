import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, MEMBERS, memberApi, NO_ID, tick } from '../../helpers/members';
import { withSqlCount } from '../../helpers/sql-count';
import { WALK_ROWS } from '../../../src/db/lean';

const GROUPS = '/api/v1/groups';
let app: TestApp;
let api: ReturnType<typeof memberApi>;
let t: Tenant;
let other: Tenant;
let city: string;
let dept: string;
let otherCity: string;
const ids: Record<string, string> = {};

const PEOPLE = [
  { externalId: 'ada-1', firstName: 'Ada', lastName: 'Lovelace', emailAddress: 'Ada.Lovelace@Example.org', city: 'Berlin', dept: 'Math' },
  { externalId: 'grace-2', firstName: 'Grace', lastName: 'Hopper', emailAddress: 'grace@navy.example', city: 'Berlin', dept: 'Navy' },
  { externalId: 'alan-3', firstName: 'Alan', lastName: 'Turing', emailAddress: 'alan@example.org', city: 'london', dept: 'Math' },
  { externalId: 'pct_4', firstName: '100%', lastName: 'Sure_Thing', emailAddress: null, city: 'Berlin ', dept: 'Math' },
  { externalId: 'x-5', firstName: 'Adalbert', lastName: 'Stifter', emailAddress: 'stifter@example.at', city: 'Berlin', dept: 'Math' },
];

const list = (query: string, tenant = t) => app.http.get(`${MEMBERS}?${query}`).set(auth(tenant));
const names = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results.map((m: { externalId: string }) => m.externalId);
};
const gql = (query: string, variables: Record<string, unknown> = {}, tenant = t) => app.http.post('/graphql').set(auth(tenant)).send({ query, variables });

beforeAll(async () => {
  app = await startTestApp();
  api = memberApi(app);
  t = await app.tenant();
  other = await app.tenant();
  city = await api.createField(t, { name: 'City', orderNumber: 1 });
  dept = await api.createField(t, { name: 'Department', orderNumber: 2 });
  otherCity = await api.createField(other, { name: 'City', orderNumber: 1 });
  for (const p of PEOPLE) {
    const { city: c, dept: d, ...body } = p;
    ids[p.externalId] = (await api.createMember(t, { ...body, additionalFields: [{ id: city, value: c }, { id: dept, value: d }] })).id;
    // The neighbour community holds the same people, with the same values.
    await api.createMember(other, { ...body, additionalFields: [{ id: otherCity, value: c }] });
    await tick();
  }
  for (const name of ['Team Berlin', 'Berlin Runners', 'Hamburg', '50% off']) {
    const res = await app.http.post(GROUPS).set(auth(t)).send({ name, externalId: name === 'Hamburg' ? 'hh-berlin-branch' : undefined });
    expect(res.status).toBe(201);
    await app.http.post(GROUPS).set(auth(other)).send({ name });
    await tick();
  }
});
afterAll(() => app.close());

describe('GET /members?emailAddress=', () => {
  it('is an exact match, case-insensitive', async () => {
    expect(names(await list('emailAddress=ada.lovelace@example.org'))).toEqual(['ada-1']);
    expect(names(await list('emailAddress=ADA.LOVELACE@EXAMPLE.ORG'))).toEqual(['ada-1']);
    expect(names(await list('emailAddress=lovelace@example.org'))).toEqual([]); // not "contains"
    expect(names(await list('emailAddress=nobody@example.org'))).toEqual([]);
  });

  it('400 naming #/query/emailAddress for a malformed or empty address', async () => {
    for (const bad of ['not-an-address', '', 'a@b', 'x'.repeat(300) + '@example.org']) {
      const res = await list(`emailAddress=${encodeURIComponent(bad)}`);
      expectProblem(res, 400, '#/query/emailAddress');
    }
  });
});

describe('GET /members?q=', () => {
  it('matches firstName, lastName, "firstName lastName", emailAddress and externalId, contains, case-insensitive', async () => {
    expect(names(await list('q=ADA'))).toEqual(['ada-1', 'x-5']); // firstName Ada, Adalbert
    expect(names(await list('q=hopp'))).toEqual(['grace-2']); // lastName
    expect(names(await list(`q=${encodeURIComponent('ada lovelace')}`))).toEqual(['ada-1']); // full name
    expect(names(await list(`q=${encodeURIComponent('e Hop')}`))).toEqual(['grace-2']); // across the space
    expect(names(await list('q=navy.example'))).toEqual(['grace-2']); // emailAddress
    expect(names(await list('q=alan-3'))).toEqual(['alan-3']); // externalId
    expect(names(await list('q=zzzz'))).toEqual([]);
    // Never across two other columns (the index's joined text has them side by side).
    expect(names(await list(`q=${encodeURIComponent('lovelace ada.')}`))).toEqual([]); // lastName, emailAddress
    expect(names(await list(`q=${encodeURIComponent('org ada-1')}`))).toEqual([]); // emailAddress, externalId
    // A page the first rows fill (tested in-row) and one the search fills agree.
    expect(names(await list('q=ADA&limit=1'))).toEqual(['ada-1']);
    expect(names(await list('q=ADA&limit=1&skip=1'))).toEqual(['x-5']);
  });

  it('is trimmed, and treats % and _ literally', async () => {
    expect(names(await list(`q=${encodeURIComponent('  hopper  ')}`))).toEqual(['grace-2']);
    expect(names(await list(`q=${encodeURIComponent('%')}`))).toEqual(['pct_4']);
    expect(names(await list(`q=${encodeURIComponent('_')}`))).toEqual(['pct_4']); // not "any character"
    expect(names(await list(`q=${encodeURIComponent('e_t')}`))).toEqual(['pct_4']);
    expect(names(await list(`q=${encodeURIComponent('a%e')}`))).toEqual([]);
    expect(names(await list(`q=${encodeURIComponent('\\')}`))).toEqual([]);
  });

  it('400 naming #/query/q when empty, blank or over 100 characters; 100 is fine', async () => {
    for (const bad of ['', '   ', 'x'.repeat(101), ` ${'x'.repeat(101)} `]) {
      expectProblem(await list(`q=${encodeURIComponent(bad)}`), 400, '#/query/q');
    }
    expect(names(await list(`q=${'x'.repeat(100)}`))).toEqual([]);
    expect(names(await list(`q=${encodeURIComponent(` ${'x'.repeat(100)} `)}`))).toEqual([]);
    expectProblem(await list('q=a&q=b'), 400, '#/query/q');
  });

  it('a skip as large as an int: an empty page, as without q', async () => {
    for (const query of ['q=ada&skip=2147483647', `q=${encodeURIComponent('ada love')}&skip=2147483600&limit=100`, 'skip=2147483647']) {
      expect(names(await list(query)), query).toEqual([]);
    }
  });

  it('ignores case beyond ASCII, as ILIKE does, both in the first rows and through the search', async () => {
    const u = await app.tenant();
    for (const [externalId, firstName, lastName] of [['j-1', 'Jürgen', 'ÖSTERLE'], ['j-2', 'JÜRGEN', 'Østergaard'], ['x-3', 'Karl', 'Marx']]) {
      await api.createMember(u, { externalId, firstName, lastName });
      await tick();
    }
    // limit=1 is filled by testing the first rows in order; the default page by the search (member_search_first).
    for (const query of ['q=j%C3%BCrg', 'q=J%C3%9CRG', 'q=j%C3%9Crgen']) {
      expect(names(await list(query, u))).toEqual(['j-1', 'j-2']);
      expect(names(await list(`${query}&limit=1`, u))).toEqual(['j-1']);
    }
    expect(names(await list(`q=${encodeURIComponent('östERLE')}`, u))).toEqual(['j-1']);
    expect(names(await list(`q=${encodeURIComponent('øSTER')}`, u))).toEqual(['j-2']);
    expect(names(await list(`q=${encodeURIComponent('jürgen österle')}`, u))).toEqual(['j-1']); // "firstName lastName"
    expect(names(await list(`q=${encodeURIComponent('n ø')}`, u))).toEqual(['j-2']);
  });
});

describe('GET /members?field.<id>=', () => {
  it('matches the value exactly (case and spaces count)', async () => {
    expect(names(await list(`field.${city}=Berlin`))).toEqual(['ada-1', 'grace-2', 'x-5']);
    expect(names(await list(`field.${city}=berlin`))).toEqual([]);
    expect(names(await list(`field.${city}=${encodeURIComponent('Berlin ')}`))).toEqual(['pct_4']);
    expect(names(await list(`field.${city}=London`))).toEqual([]);
    expect(names(await list(`field.${city.toUpperCase()}=london`))).toEqual(['alan-3']); // ids are case-insensitive
  });

  it('combines several fields (all must match)', async () => {
    expect(names(await list(`field.${city}=Berlin&field.${dept}=Math`))).toEqual(['ada-1', 'x-5']);
    expect(names(await list(`field.${city}=Berlin&field.${dept}=Nope`))).toEqual([]);
  });

  it('400 naming #/query/field.<id> for an unknown id, a malformed id, another community\'s field, a too long value', async () => {
    for (const id of [NO_ID, 'not-a-uuid', otherCity, '']) {
      const res = await list(`field.${id}=Berlin&field.${city}=Berlin`);
      const body = expectProblem(res, 400, `#/query/field.${id}`);
      expect(body.errors).toHaveLength(1);
    }
    expectProblem(await list(`field.${city}=${'x'.repeat(2049)}`), 400, `#/query/field.${city}`);
    expectProblem(await list(`field.${city}=a&field.${city}=b`), 400, `#/query/field.${city}`);
    expectProblem(await list(`${encodeURIComponent('field.a/b~c')}=x`), 400, '#/query/field.a~1b~0c');
  });
});

describe('combined filters', () => {
  it('every filter must match; with sort, limit, skip and modifiedSince', async () => {
    expect(names(await list(`q=ada&field.${city}=Berlin`))).toEqual(['ada-1', 'x-5']);
    expect(names(await list(`q=ada&field.${city}=Berlin&emailAddress=stifter@example.at`))).toEqual(['x-5']);
    expect(names(await list(`q=ada&emailAddress=grace@navy.example`))).toEqual([]);
    expect(names(await list(`q=ada&sort=lastName:desc`))).toEqual(['x-5', 'ada-1']);
    expect(names(await list(`q=a&sort=firstName&limit=2&skip=1&field.${dept}=Math`))).toEqual(['x-5', 'alan-3']); // Ada, Adalbert, Alan: 100% has no a
  });

  it('modifiedSince with a filter: the sync of a segment', async () => {
    const since = new Date().toISOString();
    await tick();
    expect(names(await list(`field.${city}=Berlin&modifiedSince=${since}`))).toEqual([]);
    const res = await app.http.patch(`${MEMBERS}/${ids['grace-2']}`).set(auth(t)).send({ additionalFields: [{ id: dept, value: 'Navy2' }] });
    expect(res.status).toBe(204);
    await app.http.patch(`${MEMBERS}/${ids['alan-3']}`).set(auth(t)).send({ lastName: 'Turing' + '' });
    await app.http.patch(`${MEMBERS}/${ids['alan-3']}`).set(auth(t)).send({ firstName: 'Alan M.' });
    expect(names(await list(`field.${city}=Berlin&modifiedSince=${since}`))).toEqual(['grace-2']);
    expect(names(await list(`modifiedSince=${since}&q=alan`))).toEqual(['alan-3']);
  });

  it('pages keep every filter in _links, and never overlap', async () => {
    const first = await list(`q=a&limit=2&field.${dept}=Math&sort=lastName&api_key=${t.key}`);
    expect(names(first)).toHaveLength(2);
    const next = first.body._links.next as string;
    const url = new URL(next, 'http://x');
    expect(url.searchParams.get('q')).toBe('a');
    expect(url.searchParams.get(`field.${dept}`)).toBe('Math');
    expect(url.searchParams.get('sort')).toBe('lastName');
    expect(url.searchParams.get('skip')).toBe('2');
    expect(url.searchParams.has('api_key')).toBe(false);
    expect(first.body._links.self).toContain(`field.${dept}=Math`);
    const second = await app.http.get(next).set(auth(t));
    const all = [...names(first), ...names(second)];
    expect(second.body._links.next).toBeUndefined();
    expect(new URL(second.body._links.prev, 'http://x').searchParams.get(`field.${dept}`)).toBe('Math');
    expect(all.sort()).toEqual(['ada-1', 'alan-3', 'x-5']);
  });
});

describe('tenancy', () => {
  it("another community's identical member is never found", async () => {
    for (const query of ['emailAddress=grace@navy.example', 'q=hopper', `field.${city}=Berlin`]) {
      const mine = (await list(query)).body.results.map((m: { id: string }) => m.id);
      expect(mine.every((id: string) => Object.values(ids).includes(id))).toBe(true);
    }
    const theirs = await list(`field.${otherCity}=Berlin`, other);
    expect(names(theirs)).toEqual(['ada-1', 'grace-2', 'x-5']);
    expect(theirs.body.results.some((m: { id: string }) => Object.values(ids).includes(m.id))).toBe(false);
    // The neighbour's key cannot use this community's field id.
    expectProblem(await list(`field.${city}=Berlin`, other), 400, `#/query/field.${city}`);
  });
});

describe('GET /groups?q=', () => {
  const groups = (query: string) => app.http.get(`${GROUPS}?${query}`).set(auth(t));
  const groupNames = async (query: string) => {
    const res = await groups(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results.map((g: { name: string }) => g.name);
  };
  it('matches name and externalId, contains, case-insensitive; % literal; combines with sort and paging', async () => {
    expect(await groupNames('q=BERLIN')).toEqual(['Team Berlin', 'Berlin Runners', 'Hamburg']);
    expect(await groupNames('q=run')).toEqual(['Berlin Runners']);
    expect(await groupNames(`q=${encodeURIComponent('%')}`)).toEqual(['50% off']);
    expect(await groupNames('q=berlin&sort=name:desc&limit=1&skip=1')).toEqual(['Hamburg']);
    const res = await groups('q=berlin&limit=1');
    expect(new URL(res.body._links.next, 'http://x').searchParams.get('q')).toBe('berlin');
  });
  it('400 naming #/query/q; never finds another community\'s group', async () => {
    expectProblem(await groups('q='), 400, '#/query/q');
    expectProblem(await groups(`q=${'y'.repeat(101)}`), 400, '#/query/q');
    const res = await app.http.get(`${GROUPS}?q=Hamburg`).set(auth(other));
    expect(res.body.results.map((g: { externalId: string | null }) => g.externalId)).toEqual([null]);
  });
});

describe('GraphQL', () => {
  const QUERY = `query($filter: MemberFilter, $sort: [MemberSort!]) { members(filter: $filter, sort: $sort, limit: 100) { results { externalId } } }`;
  it('members(filter:) agrees with REST', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ q: 'ada' }, 'q=ada'],
      [{ emailAddress: 'GRACE@navy.example' }, 'emailAddress=GRACE@navy.example'],
      [{ fields: [{ id: city, value: 'Berlin' }, { id: dept, value: 'Math' }] }, `field.${city}=Berlin&field.${dept}=Math`],
      [{ q: 'a', fields: [{ id: dept, value: 'Math' }] }, `q=a&field.${dept}=Math`],
    ];
    for (const [filter, query] of cases) {
      const res = await gql(QUERY, { filter });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data.members.results.map((m: { externalId: string }) => m.externalId)).toEqual(names(await list(`${query}&limit=100`)));
    }
    const groups = await gql('{ groups(filter: { q: "berlin" }) { results { name } } }');
    expect(groups.body.data.groups.results.map((g: { name: string }) => g.name)).toEqual(['Team Berlin', 'Berlin Runners', 'Hamburg']);
  });

  it('bad filters are VALIDATION errors with the argument path', async () => {
    const bad = async (filter: Record<string, unknown>, path: (string | number)[]) => {
      const res = await gql(QUERY, { filter });
      expect(res.body.errors[0].extensions.code).toBe('VALIDATION');
      expect(res.body.errors[0].extensions.errors).toEqual([{ path, detail: expect.any(String) }]);
    };
    await bad({ q: ' ' }, ['filter', 'q']);
    await bad({ emailAddress: 'nope' }, ['filter', 'emailAddress']);
    await bad({ fields: [{ id: city, value: 'Berlin' }, { id: otherCity, value: 'Berlin' }] }, ['filter', 'fields', 1, 'id']);
    await bad({ fields: Array.from({ length: 21 }, () => ({ id: city, value: 'x' })) }, ['filter', 'fields', 20, 'id']);
  });
});

describe('SQL statements per request', () => {
  it('stay the same whatever the page size or the number of filters', async () => {
    // The statements in the message: a failure says which one came or went.
    const shown = (statements: { sql: string }[]) => statements.map((x) => x.sql.trim().slice(0, 60)).join(' | ');
    const count = async (query: string) => {
      const { result, all, statements } = await withSqlCount(app.runtime, () => list(query));
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      return { all, shown: `${query}: ${shown(statements)}` };
    };
    const plain = (await count('limit=1')).all;
    for (const query of [
      'limit=100',
      'q=a&limit=100',
      `emailAddress=ada.lovelace@example.org&q=ada&field.${city}=Berlin&field.${dept}=Math&limit=100&sort=lastName`,
      `field.${city}=Berlin`,
    ]) {
      const n = await count(query);
      expect(n.all, n.shown).toBe(plain);
    }
    const group = async (query: string) => (await withSqlCount(app.runtime, () => app.http.get(`${GROUPS}?${query}`).set(auth(t)))).all;
    expect(await group('q=berlin&limit=100')).toBe(await group('limit=1'));
  });
});

describe('field and text filters past the first rows of the page order', () => {
  it('a walked page, a walk that falls back, and a few matches found directly agree with the full order', async () => {
    const tenant = await app.tenant();
    const team = await api.createField(tenant, { name: 'Team' });
    const all = await api.createField(tenant, { name: 'All' });
    const total = 2 * WALK_ROWS + 100;
    // "late": member 7, then every member after the first WALK_ROWS (more than WALK_ROWS: walked, and the walk falls short);
    // "early": every 2nd of the first WALK_ROWS (fewer: found directly); "All" = "x" for everyone (walked, page found).
    const teamOf = (i: number) => (i === 7 || i >= WALK_ROWS ? 'late' : i % 2 === 0 ? 'early' : 'none');
    for (let start = 0; start < total; start += 1000) {
      const members = Array.from({ length: Math.min(1000, total - start) }, (_, k) => {
        const i = start + k;
        return { externalId: `w-${i}`, additionalFields: [{ id: team, value: teamOf(i) }, { id: all, value: 'x' }] };
      });
      const res = await app.http.post(`${MEMBERS}/_bulk`).set(auth(tenant)).send({ members });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(201);
    }
    const page = (query: string) => list(query, tenant).then(names);
    const w = (...i: number[]) => i.map((n) => `w-${n}`);
    expect(await page(`field.${all}=x&limit=3&skip=2`)).toEqual(w(2, 3, 4));
    expect(await page(`field.${all}=x&field.${team}=late&limit=3`)).toEqual(w(7, WALK_ROWS, WALK_ROWS + 1));
    expect(await page(`field.${team}=late&limit=2&skip=1`)).toEqual(w(WALK_ROWS, WALK_ROWS + 1));
    expect(await page(`field.${team}=early&limit=2&skip=3`)).toEqual(w(6, 8));
    // A bulk shares one createdAt: newest bulk first, then id (input order) ascending.
    expect(await page(`field.${team}=late&limit=2&sort=createdAt:desc`)).toEqual(w(2 * WALK_ROWS, 2 * WALK_ROWS + 1));
    expect(await page(`field.${all}=x&limit=2&sort=createdAt:desc`)).toEqual(w(2 * WALK_ROWS, 2 * WALK_ROWS + 1));
    const far = await list(`field.${team}=late&limit=100&skip=${WALK_ROWS + 50}`, tenant); // beyond any walk: every match
    expect(names(far)).toEqual(w(...Array.from({ length: 51 }, (_, k) => 2 * WALK_ROWS + 49 + k))); // 7, then 5000... is 5,101
    // Texts walk the first TEXT_WALK_ROWS (500): "w-" is everyone's (found at once), "w-7" is w-7 and w-70..79 there
    // (walked), "w-100" only w-100 there (the walk falls back to the search).
    expect(await page('q=W-&limit=3&skip=2')).toEqual(w(2, 3, 4));
    expect(await page('q=w-&limit=2&sort=createdAt:desc')).toEqual(w(2 * WALK_ROWS, 2 * WALK_ROWS + 1));
    expect(await page('q=w-7&limit=3')).toEqual(w(7, 70, 71));
    expect(await page('q=w-100&limit=3')).toEqual(w(100, 1000, 1001));
    expect(await page(`q=w-7&field.${team}=late&limit=2`)).toEqual(w(7, 7000));
    expect(await page('q=w-100&limit=100&skip=100').then((p) => p.length)).toBe(1 + 10 + 100 - 100); // w-100, w-1000.., w-10000..
  }, 180_000);
});
