import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedOpenApi } from '../../src/openapi';
import { deref, operations, type Doc } from '../helpers/examples';
import { startTestApp, type TestApp } from '../helpers/app';

// newman has no type declarations; its Node API is run(options, callback).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const newman = require('newman') as { run(options: object, done: (err: Error | null, summary: any) => void): void };

const ROOT = path.resolve(__dirname, '../..');
const PORTMAN = path.join(path.dirname(require.resolve('@apideck/portman/package.json')), 'bin', 'portman');

/**
 * What README and docs/openapi.md tell users to run, from the served document and the
 * shipped configuration only: `npx @apideck/portman -u <served document> -c
 * portman/portman-config.json`, then newman with an API key.
 */
describe('Portman + newman from the served document and portman/portman-config.json', () => {
  let app: TestApp;
  let server: Server;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    app = await startTestApp();
    server = app.runtime.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portman-'));
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await app?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** What README tells users to run: Portman converts the served document with a configuration file. */
  async function portman(config: string, name: string): Promise<any> {
    const collection = path.join(dir, name);
    await promisify(execFile)(process.execPath, [PORTMAN, '-u', `${base}/api/v1/openapi.json`, '-c', config, '-o', collection], { cwd: ROOT, timeout: 120_000 });
    return JSON.parse(fs.readFileSync(collection, 'utf8'));
  }

  /** newman runs a collection against this service with a new community's key. */
  async function newmanRun(collection: object): Promise<any> {
    const t = await app.tenant();
    return new Promise<any>((resolve, reject) =>
      newman.run(
        {
          collection,
          // The configuration's baseUrl is the README's localhost:3000; this run's service listens elsewhere.
          envVar: [
            { key: 'baseUrl', value: `${base}/api/v1` },
            { key: 'apiKey', value: t.key },
          ],
          reporters: [],
        },
        (err, result) => (err ? reject(err) : resolve(result)),
      ),
    );
  }

  it('gives 0 failed assertions over every operation of the document, in a fresh community', async () => {
    const summary = await newmanRun(await portman('portman/portman-config.json', 'collection.json'));
    const failures = summary.run.failures.map((f: any) => `${f.source?.name}: ${f.error?.message}`);
    expect(failures).toEqual([]);
    const { stats, executions } = summary.run;
    expect(stats.assertions.failed).toBe(0);
    expect(stats.assertions.total).toBeGreaterThan(200);
    // Every operation ran once, and each answered its success status.
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as Doc;
    expect(executions).toHaveLength(operations(doc).size);
    for (const e of executions) expect(e.response.code, e.item.name).toBeLessThan(300);
  }, 180_000);

  it("Portman's fuzzing (required fields removed, numbers and lengths past their bounds, in bodies, query strings and headers): a 4xx problem+json each, never a 5xx", async () => {
    // The shipped configuration plus Portman's fuzzing variations of every operation, as an
    // outside contract tester would add them. Without the shipped chaining (its last step stops
    // the run) the requests go in the collection's order, the variations last.
    const shipped = JSON.parse(fs.readFileSync(path.join(ROOT, 'portman/portman-config.json'), 'utf8'));
    const all = ['requiredFields', 'minimumNumberFields', 'maximumNumberFields', 'minLengthFields', 'maxLengthFields'].map((k) => ({ [k]: { enabled: true } }));
    const config = {
      ...shipped,
      tests: {
        ...shipped.tests,
        extendTests: [],
        variationTests: [{
          openApiOperation: '*::/*',
          variations: [{
            name: 'Fuzz',
            // Headers too: Idempotency-Key empty and one past its 255 characters. Portman pads the
            // document's example with its first character; the example is fixed, since a random one
            // from the pattern that began with a space padded to a key HTTP trims back to 255.
            fuzzing: [{ requestBody: all, requestQueryParams: all, requestHeaders: all }],
            tests: { extendTests: [{ tests: [
              "pm.test('fuzz: not a 5xx', () => pm.expect(pm.response.code).to.be.below(500));",
              "pm.test('fuzz: a 4xx', () => pm.expect(pm.response.code).to.be.within(400, 499));",
              "pm.test('fuzz: problem+json', () => pm.expect(pm.response.headers.get('Content-Type')).to.include('application/problem+json'));",
            ] }] },
          }],
        }],
      },
    };
    const configFile = path.join(dir, 'fuzz-config.json');
    fs.writeFileSync(configFile, JSON.stringify(config));
    const generated = await portman(configFile, 'fuzz-collection.json');
    // The examples' deletes go last, so the variations meet live records (a fuzzed body for a
    // deleted group would stop at its 404, before the body is read).
    const deletes: any[] = [];
    for (const folder of generated.item) {
      if (!folder.item || folder.name === 'Variation Tests') continue;
      deletes.push(...folder.item.filter((r: any) => r.request?.method === 'DELETE'));
      folder.item = folder.item.filter((r: any) => r.request?.method !== 'DELETE');
    }
    generated.item.push({ name: 'Deletes', item: deletes });
    // Portman cannot fuzz a property its example request lacks (an icon's style, a field value's
    // id): such a variation is the example itself, a valid request. Those are held to "not a 5xx" only.
    const requests = (items: any[]): any[] => items.flatMap((i) => (i.item ? requests(i.item) : [i]));
    const sent = (r: any) => JSON.stringify([r.request.body?.raw ? JSON.parse(r.request.body.raw) : null, r.request.url?.query ?? [], r.request.header ?? []]);
    const items = requests(generated.item);
    const examples = new Map(items.filter((r) => !r.name.includes('[Fuzz]')).map((r) => [r.name, sent(r)]));
    const unchanged = new Set(items.filter((r) => r.name.includes('[Fuzz]') && sent(r) === examples.get(r.name.split('[Fuzz]')[0])).map((r) => r.name));
    const summary = await newmanRun(generated);
    const fuzzed = summary.run.executions.filter((e: any) => (e.assertions ?? []).some((a: any) => a.assertion.startsWith('fuzz:')));
    // Every operation with a body or query parameter to fuzz: 90 variations that change the request;
    // and an empty and an over-long Idempotency-Key on each of the 11 POSTs that take one.
    expect(fuzzed.length - unchanged.size).toBeGreaterThan(100);
    const keys = fuzzed.filter((e: any) => /length Idempotency-Key\]$/.test(e.item.name));
    expect(keys).toHaveLength(22);
    for (const e of keys) expect([e.item.name, e.response.code]).toEqual([e.item.name, 400]);
    const judged = (e: any, a: any) => a.assertion === 'fuzz: not a 5xx' || !unchanged.has(e.item.name);
    const failed = fuzzed.flatMap((e: any) => e.assertions.filter((a: any) => a.assertion.startsWith('fuzz:') && a.error && judged(e, a)).map((a: any) => `${e.item.name} (${e.response?.code}): ${a.assertion}`));
    expect(failed).toEqual([]);
  }, 180_000);
});

describe('links: each create leads to the operations that take its id', () => {
  const doc = JSON.parse(printedOpenApi());
  const ops = operations(doc);

  it('every link names an operation and only parameters it has; every record operation is reached', () => {
    const reached = new Set<string>();
    for (const [id, { op }] of ops) {
      for (const response of Object.values<any>(op.responses)) {
        for (const link of Object.values<any>(response.links ?? {})) {
          const target = ops.get(link.operationId);
          expect(target, `${id} -> ${link.operationId}`).toBeDefined();
          const names = (target!.op.parameters ?? []).map((p: any) => deref(doc, p).name);
          for (const name of Object.keys(link.parameters)) expect(names, `${id} -> ${link.operationId}`).toContain(name);
          // The target's required path parameters are all given.
          for (const p of (target!.op.parameters ?? []).map((x: any) => deref(doc, x)).filter((x: any) => x.in === 'path')) {
            expect(Object.keys(link.parameters), `${id} -> ${link.operationId}`).toContain(p.name);
          }
          reached.add(link.operationId);
        }
      }
    }
    const withIdentifier = [...ops].filter(([, o]) => o.path.includes('{identifier}')).map(([id]) => id);
    expect(withIdentifier.filter((id) => !reached.has(id))).toEqual([]);
    expect(ops.get('addGroup')!.op.responses[201].links.getGroup.parameters).toEqual({ identifier: '$response.body#/id', key: 'id' });
    expect(ops.get('importGroups')!.op.responses[202].links.getImportJob.parameters).toEqual({ identifier: '$response.body#/id' });
  });
});
