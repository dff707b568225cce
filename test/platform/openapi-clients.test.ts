import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedOpenApi } from '../../src/openapi';
import { callEveryOperation } from '../clients/client';
import { operations, successStatus } from '../helpers/examples';
import { startTestApp, type TestApp } from '../helpers/app';

const CLIENTS = path.resolve(__dirname, '../clients');
const ROOT = path.resolve(__dirname, '../..');

/** The one ```ts block of README.md, as written there. */
function readmeSnippet(): string {
  const blocks = [...fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  expect(blocks).toHaveLength(1);
  return blocks[0];
}

const tscRun = (cwd: string, project: string) =>
  promisify(execFile)(process.execPath, [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', project], { cwd }).then(
    () => '',
    (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}` || 'tsc failed',
  );
const doc = JSON.parse(printedOpenApi());

describe('a client generated from the document (openapi-typescript + openapi-fetch)', () => {
  let app: TestApp;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    // The types a user gets from `npx openapi-typescript <document> --default-non-nullable false`.
    const ast = await openapiTS(doc, { defaultNonNullable: false });
    fs.mkdirSync(path.join(CLIENTS, 'generated'), { recursive: true });
    fs.writeFileSync(path.join(CLIENTS, 'generated', 'api.ts'), astToString(ast));
    app = await startTestApp();
    server = app.runtime.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await app?.close();
  });

  it('type-checks the client script against the generated types (tsc --noEmit), refused calls included', async () => {
    const tsc = require.resolve('typescript/bin/tsc');
    const run = promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', CLIENTS], { cwd: CLIENTS }).then(
      () => '',
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}` || 'tsc failed',
    );
    expect(await run).toBe('');
  }, 120_000);

  it('calls every operation of the document and gets its documented success status', async () => {
    const t = await app.tenant();
    const statuses = await callEveryOperation(base, t.key);
    const expected = Object.fromEntries([...operations(doc)].map(([id, o]) => [id, successStatus(o.op)]));
    expect(statuses).toEqual(expected);
  }, 60_000);

  describe("README's typed-client snippet, taken from README.md", () => {
    let dir: string;
    beforeAll(async () => {
      // An ES module project next to the generated api.d.ts (what `npx openapi-typescript ... -o api.d.ts` writes);
      // inside the repository so openapi-fetch and @types/node resolve from its node_modules.
      dir = path.join(CLIENTS, 'generated', 'readme');
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(doc, { defaultNonNullable: false })));
      fs.writeFileSync(path.join(dir, 'client.ts'), readmeSnippet());
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const options = { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], lib: ['ES2022', 'DOM'] };
      fs.writeFileSync(
        path.join(dir, 'tsconfig.nodenext.json'),
        JSON.stringify({ compilerOptions: { ...options, module: 'nodenext', moduleResolution: 'nodenext' }, files: ['client.ts'] }),
      );
      fs.writeFileSync(
        path.join(dir, 'tsconfig.bundler.json'),
        JSON.stringify({ compilerOptions: { ...options, module: 'esnext', moduleResolution: 'bundler' }, files: ['client.ts'] }),
      );
    }, 60_000);

    it('type-checks with module and moduleResolution nodenext (an ESM Node project)', async () => {
      expect(await tscRun(dir, 'tsconfig.nodenext.json')).toBe('');
    }, 120_000);

    it('type-checks with moduleResolution bundler', async () => {
      expect(await tscRun(dir, 'tsconfig.bundler.json')).toBe('');
    }, 120_000);

    it('runs against the service: creates the group and reads it back', async () => {
      const t = await app.tenant();
      // The only change: the README's localhost:3000 is this test's service.
      const js = ts.transpileModule(readmeSnippet().replaceAll('http://localhost:3000', base), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      fs.writeFileSync(path.join(dir, 'client.mjs'), js);
      const { stdout } = await promisify(execFile)(process.execPath, [path.join(dir, 'client.mjs')], {
        cwd: dir,
        env: { ...process.env, KEY: t.key },
      });
      expect(stdout.trim()).toBe('Board');
      const list = await app.http.get('/api/v1/groups').set('X-API-Key', t.key).expect(200);
      expect(list.body.results).toEqual([expect.objectContaining({ name: 'Board', color: '#112233' })]);
    }, 60_000);
  });
});
