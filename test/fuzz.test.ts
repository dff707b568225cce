import { describe } from 'vitest';
import { fuzzSuite } from './helpers/fuzz';

// A quick pass in every `npm test`; `npm run test:hardening` sends 10,000 (FUZZ_RUNS overrides this one).
describe('fuzzing', () => fuzzSuite({ routeRuns: Number(process.env.FUZZ_RUNS ?? 300), graphqlRuns: 100, timeoutMs: 120_000 }));
