import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedOpenApi } from '../../src/openapi';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import {
  adoptExampleId,
  allowsNull,
  bodySchema,
  deref,
  exampleRequest,
  fieldSites,
  justOutside,
  operations,
  ORDER,
  pointer,
  seed,
  send,
  successStatus,
  validator,
  withValue,
} from '../helpers/examples';
import { expectProblem } from '../helpers/problem';

const doc = JSON.parse(printedOpenApi());
const ops = operations(doc);
const valid = validator(doc);
const JSON_LIMIT = 1024 * 1024;

/** Operations with a JSON body, their body schema and example. */
const bodies = [...ops.entries()]
  .filter(([, o]) => bodySchema(doc, o.op))
  .map(([id, o]) => ({ id, o, schema: bodySchema(doc, o.op).schema, example: bodySchema(doc, o.op).example }));

describe('the document alone is enough to call every operation', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('every schema carries an example that its own schema accepts, and every body example passes', () => {
    for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
      if (!name.startsWith('Api') || name.endsWith('Response')) continue;
      expect(schema.examples?.length, name).toBeGreaterThan(0);
      expect(valid({ $ref: `#/components/schemas/${name}` }, schema.examples[0]), name).toBe(true);
    }
    for (const { id, schema, example } of bodies) {
      expect(example, id).toBeDefined();
      expect(valid(schema, example), id).toBe(true);
    }
  });

  it('every operation is placed in the order the examples run in', () => {
    expect([...ops.keys()].sort()).toEqual([...ORDER].sort());
  });

  it('a request built only from the examples gets the documented success status, for every operation', async () => {
    const t = await app.tenant();
    const statuses: Record<string, number> = {};
    for (const id of ORDER) {
      const operation = ops.get(id)!;
      const req = exampleRequest(doc, operation);
      for (const p of (operation.op.parameters ?? []).map((x: any) => deref(doc, x))) {
        if (p.in === 'path') expect(p.example, `${id} ${p.name}`).toBeDefined();
      }
      const res = await send(app, t, req);
      expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(successStatus(operation.op));
      statuses[id] = res.status;
      await adoptExampleId(app, id, res);
      if (operation.op.responses[res.status].headers?.Location) {
        expect(res.headers.location).toBe(`/api/v1/import_jobs/${res.body.id}`);
      }
    }
    expect(Object.keys(statuses)).toHaveLength(ops.size);
  });

  it('null is accepted for every input property the document marks nullable, and refused for the others', async () => {
    let accepted = 0;
    let refused = 0;
    for (const { id, o, schema, example } of bodies) {
      let t: Tenant | undefined;
      for (const site of fieldSites(doc, schema, example)) {
        const body = withValue(example, site.path, null);
        if (!t) {
          t = await app.tenant(); // a fresh community after every accepted write
          await seed(app, t, doc, id);
        }
        const res = await send(app, t, exampleRequest(doc, o, body));
        if (res.status < 300) t = undefined;
        if (allowsNull(doc, site.schema) && valid(schema, body)) {
          expect(res.status, `${id} ${pointer(site.path)}: null -> ${JSON.stringify(res.body)}`).toBe(successStatus(o.op));
          accepted++;
        } else if (!allowsNull(doc, site.schema)) {
          expect(valid(schema, body), `${id} ${pointer(site.path)}`).toBe(false);
          expectProblem(res, 400, pointer(site.path));
          refused++;
        }
      }
    }
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  }, 120_000);

  it('every documented constraint is enforced: a value just outside it is a 400 naming the field', async () => {
    const t = await app.tenant();
    await seed(app, t, doc);
    let checked = 0;
    for (const { id, o, schema, example } of bodies) {
      for (const site of fieldSites(doc, schema, example)) {
        const current = site.path.reduce((v: any, k) => v?.[k], example);
        for (const { keyword, value } of justOutside(doc, site.schema, current)) {
          const body = withValue(example, site.path, value);
          const label = `${id} ${pointer(site.path)} ${keyword}`;
          expect(valid(schema, body), label).toBe(false);
          const res = await send(app, t, exampleRequest(doc, o, body));
          if (JSON.stringify(body).length > JSON_LIMIT) {
            expectProblem(res, 413); // more items than a body may carry: refused before it is read
          } else {
            expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
            expectProblem(res, 400, pointer(site.path));
          }
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
  }, 120_000);

  it('"at least one of" is in the document and in the service: an empty object is refused by both', async () => {
    const t = await app.tenant();
    await seed(app, t, doc);
    for (const id of ['addMember', 'addGroupMembership', 'addNotification']) {
      const o = ops.get(id)!;
      const schema = deref(doc, bodySchema(doc, o.op).schema);
      expect(schema.allOf[0].anyOf, id).toBeDefined();
      expect(o.op.requestBody.required, id).toBe(true);
      const body = id === 'addNotification' ? { title: 'x', message: 'y' } : {};
      expect(valid(bodySchema(doc, o.op).schema, body), id).toBe(false);
      expectProblem(await send(app, t, exampleRequest(doc, o, body)), 400);
    }
  });

  it('the sort pattern accepts exactly what the service accepts', async () => {
    const t = await app.tenant();
    await seed(app, t, doc);
    for (const [id, o] of ops) {
      const sort = (o.op.parameters ?? []).map((p: any) => deref(doc, p)).find((p: any) => p.name === 'sort');
      if (!sort) continue;
      const f = 'createdAt';
      const cases = [
        `${f}:ASC`,
        `${f}:desc, modifiedAt:asc`,
        ` ${f} `,
        `${f}:Desc,${f}`,
        `${f}:up`,
        'nope',
        `${f}:`,
        '',
        `${f}:asc:x`,
        `,${f}`,
        `${f} :asc`,
      ];
      for (const value of cases) {
        const fits = new RegExp(sort.schema.pattern, 'u').test(value);
        const req = exampleRequest(doc, o);
        const url = new URL(req.url, 'http://x');
        url.searchParams.set('sort', value);
        const res = await send(app, t, { method: 'get', url: url.pathname + url.search });
        expect(res.status === 200, `${id} sort=${JSON.stringify(value)}: ${res.status}`).toBe(fits);
      }
    }
  });
});
