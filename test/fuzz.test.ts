import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from './helpers/app';
import { fuzzGraphql, fuzzRoutes } from './helpers/fuzz';

// A quick pass in every `npm test`; `npm run test:hardening` sends 10,000.
let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'seed', externalId: 'seed' });
});
afterAll(() => app.close());

describe('fuzzing every route of the route table', () => {
  it('no 5xx, valid problems, no internals, rejected writes change nothing', async () => {
    await fuzzRoutes(app, t, Number(process.env.FUZZ_RUNS ?? 300));
  }, 120_000);

  it('GraphQL: malformed and hostile documents never give a 5xx or a stack trace', async () => {
    await fuzzGraphql(app, t, 100);
  }, 60_000);
});
