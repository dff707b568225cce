import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestApp, type TestApp, type Tenant } from '../helpers/app';
import { fuzzGraphql, fuzzRoutes } from '../helpers/fuzz';

let app: TestApp;
let t: Tenant;
beforeAll(async () => {
  app = await startTestApp();
  t = await app.tenant({ rateLimitPerHour: 10_000_000 });
  await app.http.post('/api/v1/groups').set('X-API-Key', t.key).send({ name: 'seed', externalId: 'seed' });
});
afterAll(() => app.close());

describe('fuzzing, long run', () => {
  it('10,000 requests over every route: no 5xx, valid problems, no internals, rejected writes change nothing', async () => {
    await fuzzRoutes(app, t, 10_000);
  }, 600_000);

  it('1,000 hostile GraphQL documents', async () => {
    await fuzzGraphql(app, t, 1_000);
  }, 300_000);
});
