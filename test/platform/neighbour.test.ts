import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareNeighbours, runNeighbours, type Neighbours } from '../../bench/neighbour';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app';
import { listen } from '../../src/runtime';

/**
 * The short version of test/hardening/neighbour.test.ts: 3 s at concurrency 8 against the
 * app listening on a real port. B is always served; A meets only 2xx, 400, 429 and 503.
 */
let app: TestApp;
let server: Server;
let n: Neighbours;
beforeAll(async () => {
  app = await startTestApp({}, { worker: true });
  server = await listen(app.runtime.app, 0);
  n = await prepareNeighbours(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ADMIN_TOKEN);
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await app.close();
});

describe('noisy neighbour (short)', () => {
  it('B gets only 200 while A sends the most expensive requests the limits allow', async () => {
    const run = await runNeighbours(n, 3, 8);
    expect(run.b.length).toBeGreaterThan(0);
    expect([...new Set(run.b.map((r) => r.status))]).toEqual([200]);
    expect(Object.keys(run.a).map(Number).filter((s) => !(s >= 200 && s < 300) && ![400, 429, 503].includes(s))).toEqual([]);
    expect(run.a[400]).toBeGreaterThan(0);
  });
});
