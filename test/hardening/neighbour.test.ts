import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latency, prepareNeighbours, runNeighbours, type Neighbours } from '../../bench/neighbour';
import { ADMIN_TOKEN } from '../helpers/app';
import { startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The noisy neighbour against a real service process with its default budget: key A sends
 * the most expensive documents and requests the limits allow (bench/neighbour.ts) at
 * concurrency 16 for 20 s while key B of another community reads a group by id. B is
 * always served; A meets only 2xx, 400, 429 and 503. B's latency is reported by
 * `npm run bench`, not asserted here.
 */
let service: ServiceProcess;
let n: Neighbours;
beforeAll(async () => {
  service = await startService({ DATABASE_URL: testDatabaseUrl(), ADMIN_TOKEN });
  n = await prepareNeighbours(service.url, ADMIN_TOKEN);
}, 90_000);
afterAll(() => service?.stop());

describe('noisy neighbour', () => {
  it('B gets no 5xx and every request of B is answered while A attacks for 20 s at concurrency 16', async () => {
    const run = await runNeighbours(n, 20, 16);
    const bStatuses = [...new Set(run.b.map((r) => r.status))];
    expect(bStatuses).toEqual([200]);
    expect(Object.keys(run.a).map(Number).filter((s) => !(s >= 200 && s < 300) && ![400, 429, 503].includes(s))).toEqual([]);
    expect(run.a[400]).toBeGreaterThan(0); // the over-limit documents were refused
    console.log(`neighbour: B ${JSON.stringify(latency(run))}; A ${JSON.stringify(run.a)}`);
    expect(service.output()).not.toMatch(/"level":50/); // nothing was logged as an error
  });
});
