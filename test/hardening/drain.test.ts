import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app';
import { serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

describe('SIGTERM drains', () => {
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await service?.kill();
  });

  it('during 50 in-flight requests: readiness turns 503 first, all 50 complete, then the process exits 0', async () => {
    service = await startService({
      DATABASE_URL: testDatabaseUrl(),
      ADMIN_TOKEN,
      // One connection for the caller: the 50 bulk creates queue behind each other, so they are in flight together.
      DB_CONNECTIONS_PER_CALLER: '1',
      DB_CALLER_WAIT_SECONDS: '60',
      SHUTDOWN_DELAY_SECONDS: '1',
    });
    const { key } = await serviceTenant(service.url, ADMIN_TOKEN, 'drain', 1_000_000);
    const members = (i: number) => ({ members: Array.from({ length: 200 }, (_, j) => ({ firstName: `F${i}`, lastName: `L${j}`, externalId: `d-${i}-${j}` })) });
    let done = 0;
    const requests = Array.from({ length: 50 }, (_, i) =>
      fetch(`${service!.url}/api/v1/members/_bulk`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(members(i)),
      }).then(async (res) => {
        await res.arrayBuffer();
        done++;
        return res.status;
      }),
    );
    // All 50 reached the service once the first has been answered (they queue for one connection).
    while (done === 0) await new Promise((r) => setTimeout(r, 5));
    const exited = new Promise<number | null>((resolve) => service!.child.once('exit', (code) => resolve(code)));
    service.child.kill('SIGTERM');
    // Readiness answers 503 from the moment the signal is handled (a probe can only race the signal itself).
    let ready = await fetch(`${service.url}/readyz`);
    for (let i = 0; i < 20 && ready.status === 200; i++) ready = await fetch(`${service.url}/readyz`);
    const doneWhenReadinessFlipped = done;
    expect(ready.status, service.output()).toBe(503);
    expect(((await ready.json()) as { detail?: string }).detail).toBe('The service is shutting down');
    expect(doneWhenReadinessFlipped).toBeLessThan(50);
    expect(await Promise.all(requests.map((r) => r.catch((e: Error) => `${e.message}: ${service!.output().slice(-2000)}`)))).toEqual(Array(50).fill(201));
    expect(await exited).toBe(0);
    service = undefined;
  });
});
