import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../../helpers/app';
import { auth, expectProblem, FIELDS as URL, memberApi, TS } from '../../helpers/members';

let app: TestApp;
let t: Tenant;
let api: ReturnType<typeof memberApi>;

beforeAll(async () => {
  app = await startTestApp();
  api = memberApi(app);
  t = await app.tenant();
});
afterAll(() => app.close());

const createField = async (body: Record<string, unknown>, tenant = t) => ({ id: await api.createField(tenant, body) });
const getField = (id: string, tenant = t) => api.getField(tenant, id);
const orders = (tenant: Tenant) => api.orders(tenant);

describe('POST /api/v1/additional_fields', () => {
  it('creates a field, answers ApiInsertResponse, and GET shows every field', async () => {
    const tenant = await app.tenant();
    const res = await app.http.post(URL).set(auth(tenant)).send({
      name: 'T-shirt size',
      placeholder: 'S, M, L',
      type: 'TEXT',
      icon: { style: 'SOLID', unicode: 'f553' },
      isEditableByMember: false,
      isMandatoryForMember: true,
      isVisibleInApp: false,
      orderNumber: 4,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), externalId: null });
    const got = await getField(res.body.id, tenant);
    expect(got).toEqual({
      id: res.body.id,
      name: 'T-shirt size',
      placeholder: 'S, M, L',
      type: 'TEXT',
      icon: { style: 'SOLID', unicode: 'f553' },
      isEditableByMember: false,
      isMandatoryForMember: true,
      isVisibleInApp: false,
      orderNumber: 4,
      createdAt: expect.stringMatching(TS),
      modifiedAt: expect.stringMatching(TS),
    });
    expect(got.modifiedAt).toBe(got.createdAt);
  });

  it('defaults: no placeholder or icon, editable, not mandatory, visible, orderNumber maximum + 1 (first: 1)', async () => {
    const tenant = await app.tenant();
    const first = await createField({}, tenant);
    expect(await getField(first.id, tenant)).toMatchObject({
      placeholder: null, icon: null, isEditableByMember: true, isMandatoryForMember: false, isVisibleInApp: true, orderNumber: 1,
    });
    await createField({ orderNumber: 7 }, tenant);
    const third = await createField({}, tenant);
    expect((await getField(third.id, tenant)).orderNumber).toBe(8);
  });

  it('requires name and type', async () => {
    expectProblem(await app.http.post(URL).set(auth(t)).send({ type: 'TEXT' }), 400, '/name');
    expectProblem(await app.http.post(URL).set(auth(t)).send({ name: 'x' }), 400, '/type');
    const both = expectProblem(await app.http.post(URL).set(auth(t)).send({}), 400);
    expect(both.errors.map((e) => e.pointer).sort()).toEqual(['/name', '/type']);
  });

  it('rejects a type other than TEXT, listing the allowed values', async () => {
    const body = expectProblem(await app.http.post(URL).set(auth(t)).send({ name: 'x', type: 'NUMBER' }), 400, '/type');
    expect(body.errors[0].detail).toContain('TEXT');
  });

  it.each([
    [{ name: '' }, '/name'],
    [{ name: 'x'.repeat(257) }, '/name'],
    [{ name: null }, '/name'],
    [{ name: 5 }, '/name'],
    [{ placeholder: 'x'.repeat(257) }, '/placeholder'],
    [{ icon: 'f007' }, '/icon'],
    [{ icon: { style: 'LIGHT', unicode: 'f007' } }, '/icon/style'],
    [{ icon: { style: 'REGULAR', unicode: 'xyz' } }, '/icon/unicode'],
    [{ icon: { style: 'REGULAR', unicode: '' } }, '/icon/unicode'],
    [{ icon: { style: 'REGULAR', unicode: '1234567' } }, '/icon/unicode'],
    [{ icon: { style: 'REGULAR' } }, '/icon/unicode'],
    [{ icon: { unicode: 'f007' } }, '/icon/style'],
    [{ icon: { style: 'REGULAR', unicode: 'f007', size: 2 } }, '/icon/size'],
    [{ orderNumber: -1 }, '/orderNumber'],
    [{ orderNumber: 1.5 }, '/orderNumber'],
    [{ orderNumber: '3' }, '/orderNumber'],
    [{ orderNumber: null }, '/orderNumber'],
    [{ isEditableByMember: 'yes' }, '/isEditableByMember'],
    [{ isMandatoryForMember: null }, '/isMandatoryForMember'],
    [{ isVisibleInApp: 1 }, '/isVisibleInApp'],
    [{ externalId: 'f-1' }, '/externalId'],
    [{ id: '00000000-0000-4000-8000-000000000000' }, '/id'],
    [{ createdAt: '2026-01-01T00:00:00.000Z' }, '/createdAt'],
    [{ color: '#ffffff' }, '/color'],
  ])('400 for %j naming %s', async (patch, pointer) => {
    const before = (await app.http.get(`${URL}?limit=100`).set(auth(t))).body.size;
    const body = expectProblem(await app.http.post(URL).set(auth(t)).send({ name: 'x', type: 'TEXT', ...patch }), 400, pointer);
    expect(body.errors.every((e) => typeof e.detail === 'string' && e.detail.length > 0)).toBe(true);
    expect((await app.http.get(`${URL}?limit=100`).set(auth(t))).body.size).toBe(before);
  });

  it('names the allowed icon styles', async () => {
    const body = expectProblem(await app.http.post(URL).set(auth(t)).send({ name: 'x', type: 'TEXT', icon: { style: 'LIGHT', unicode: 'f0' } }), 400);
    expect(body.errors[0].detail).toMatch(/REGULAR.*SOLID.*BRANDS/);
  });

  it('accepts an empty placeholder, orderNumber 0 and icon style BRANDS with uppercase hex', async () => {
    const created = await createField({ placeholder: '', orderNumber: 0, icon: { style: 'BRANDS', unicode: 'F09B' } });
    expect(await getField(created.id)).toMatchObject({ placeholder: '', orderNumber: 0, icon: { style: 'BRANDS', unicode: 'F09B' } });
  });

  it('rejects a body that is not a JSON object, and malformed JSON', async () => {
    expectProblem(await app.http.post(URL).set(auth(t)).send([{ name: 'x', type: 'TEXT' }]), 400, '/');
    expectProblem(await app.http.post(URL).set(auth(t)).set('Content-Type', 'application/json').send('{"name":'), 400);
  });
});

describe('orderNumber push-back', () => {
  it('a used number goes to the written field; that field and all above move back by one', async () => {
    const tenant = await app.tenant();
    for (const name of ['A', 'B', 'C']) await createField({ name }, tenant);
    expect(await orders(tenant)).toEqual({ A: 1, B: 2, C: 3 });
    await createField({ name: 'D', orderNumber: 2 }, tenant);
    expect(await orders(tenant)).toEqual({ A: 1, D: 2, B: 3, C: 4 });
    await createField({ name: 'E', orderNumber: 10 }, tenant); // unused: nothing moves
    expect(await orders(tenant)).toEqual({ A: 1, D: 2, B: 3, C: 4, E: 10 });
    await createField({ name: 'F', orderNumber: 6 }, tenant); // unused, inside a gap
    expect(await orders(tenant)).toEqual({ A: 1, D: 2, B: 3, C: 4, F: 6, E: 10 });
    await createField({ name: 'G', orderNumber: 4 }, tenant); // used: all at 4 and above move, gaps stay
    expect(await orders(tenant)).toEqual({ A: 1, D: 2, B: 3, G: 4, C: 5, F: 7, E: 11 });
  });

  it('PATCH moves a field the same way, and a field keeping its own number moves nothing', async () => {
    const tenant = await app.tenant();
    const ids: Record<string, string> = {};
    for (const name of ['A', 'B', 'C', 'D']) ids[name] = (await createField({ name }, tenant)).id;
    const patch = (id: string, body: object) => app.http.patch(`${URL}/${id}`).set(auth(tenant)).send(body);
    expect((await patch(ids.D, { orderNumber: 1 })).status).toBe(204);
    expect(await orders(tenant)).toEqual({ D: 1, A: 2, B: 3, C: 4 });
    expect((await patch(ids.A, { orderNumber: 9 })).status).toBe(204); // unused: leaves a gap at 2
    expect(await orders(tenant)).toEqual({ D: 1, B: 3, C: 4, A: 9 });
    const before = await getField(ids.B, tenant);
    expect((await patch(ids.B, { orderNumber: 3 })).status).toBe(204);
    expect(await orders(tenant)).toEqual({ D: 1, B: 3, C: 4, A: 9 });
    expect((await getField(ids.B, tenant)).modifiedAt).toBe(before.modifiedAt);
    expect((await patch(ids.B, { orderNumber: 4 })).status).toBe(204);
    expect(await orders(tenant)).toEqual({ D: 1, B: 4, C: 5, A: 10 });
  });

  it('stays consistent under concurrent writers (no duplicate defaults)', async () => {
    const tenant = await app.tenant();
    const names = Array.from({ length: 12 }, (_, i) => `F${i}`);
    const results = await Promise.all(names.map((name) => app.http.post(URL).set(auth(tenant)).send({ name, type: 'TEXT' })));
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201));
    expect(Object.values(await orders(tenant)).sort((a, b) => a - b)).toEqual(names.map((_, i) => i + 1));
    const inserts = await Promise.all(names.slice(0, 6).map((name) => app.http.post(URL).set(auth(tenant)).send({ name: `X${name}`, type: 'TEXT', orderNumber: 1 })));
    expect(inserts.every((r) => r.status === 201)).toBe(true);
    const all = Object.values(await orders(tenant));
    expect(new Set(all).size).toBe(all.length);
  });

  it('is scoped to the community: another community\'s fields never move', async () => {
    const a = await app.tenant();
    const b = await app.tenant();
    await createField({ name: 'A1' }, a);
    await createField({ name: 'B1' }, b);
    await createField({ name: 'A0', orderNumber: 1 }, a);
    expect(await orders(b)).toEqual({ B1: 1 });
    expect(await orders(a)).toEqual({ A0: 1, A1: 2 });
  });
});
