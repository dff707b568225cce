import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedOpenApi } from '../src/openapi';
import { callEveryOperation } from './clients/client';
import { operations, successStatus } from './helpers/examples';
import { startTestApp, type TestApp } from './helpers/app';

const CLIENTS = path.resolve(__dirname, 'clients');
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
});
