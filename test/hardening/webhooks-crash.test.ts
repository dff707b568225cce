import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ADMIN_TOKEN } from '../helpers/app';
import { serviceTenant, startService, type ServiceProcess } from '../helpers/process';
import { testDatabaseUrl } from '../helpers/database';

/** kill -9 after the commit and before the delivery completed: the event still arrives, same webhook-id. */
const env = () => ({
  DATABASE_URL: testDatabaseUrl(),
  ADMIN_TOKEN,
  JOB_WORKER_STALE_SECONDS: '3',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '60000',
});
let service: ServiceProcess;
let key: string;

async function call(path: string, method = 'GET', body?: unknown) {
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  service = await startService(env());
  ({ key } = await serviceTenant(service.url, ADMIN_TOKEN, 'hooks'));
}, 60_000);
afterAll(async () => {
  await service?.stop();
});

/** A receiver that accepts each delivery but answers only while `hold` is off. */
function holdingReceiver() {
  const state = { hold: true, held: [] as (() => void)[], bodies: [] as { headers: Record<string, string>; body: string }[] };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      state.bodies.push({ headers: req.headers as Record<string, string>, body });
      if (state.hold) state.held.push(() => res.end());
      else res.end();
    });
  });
  return new Promise<typeof state & { port: number; release(): void; close(): Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(
        Object.assign(state, {
          port: (server.address() as AddressInfo).port,
          release() {
            state.hold = false;
            for (const r of state.held) r();
          },
          close: () =>
            new Promise<void>((r) => {
              server.closeAllConnections();
              server.close(() => r());
            }),
        }),
      ),
    ),
  );
}

describe('webhook delivery survives a crash', () => {
  it('killed while the delivery is in flight: delivered after the restart with the same webhook-id', async () => {
    const receiver = await holdingReceiver();
    try {
      const created = await call('/api/v1/webhook_endpoints', 'POST', { url: `http://127.0.0.1:${receiver.port}/crash`, events: ['group.created'] });
      expect(created.status).toBe(201);
      const group = await call('/api/v1/groups', 'POST', { name: 'Before the crash' });
      expect(group.status).toBe(201);
      for (const end = Date.now() + 20_000; !receiver.bodies.length && Date.now() < end; ) await sleep(50);
      expect(receiver.bodies.length).toBe(1); // committed, the delivery in flight
      await service.kill();
      receiver.release();
      service = await startService(env());
      for (const end = Date.now() + 60_000; Date.now() < end; await sleep(200)) {
        const list = await call(`/api/v1/webhook_endpoints/${created.body.id}/deliveries`);
        if (list.body.results[0]?.status === 'SUCCEEDED') break;
      }
      const [delivery] = (await call(`/api/v1/webhook_endpoints/${created.body.id}/deliveries`)).body.results;
      expect(delivery).toMatchObject({ status: 'SUCCEEDED', type: 'group.created' });
      expect(receiver.bodies.length).toBeGreaterThanOrEqual(2);
      expect([...new Set(receiver.bodies.map((b) => b.headers['webhook-id']))]).toEqual([delivery.eventId]);
      for (const b of receiver.bodies) {
        const event = new Webhook(created.body.secret).verify(b.body, b.headers) as { data: { id: string } };
        expect(event.data.id).toBe(group.body.id);
      }
    } finally {
      await receiver.close();
    }
  }, 150_000);
});
