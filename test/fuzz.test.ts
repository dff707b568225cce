import { describe } from 'vitest';
import { attackSuite, fuzzSuite } from './helpers/fuzz';

// A quick pass in every `npm test`; `npm run test:hardening` sends 10,000 (FUZZ_RUNS overrides this one).
describe('fuzzing', () => fuzzSuite({ routeRuns: Number(process.env.FUZZ_RUNS ?? 300), graphqlRuns: 100, timeoutMs: 120_000 }));

// Attack classes of resource governance, with a fixed seed (attackSuite in helpers/fuzz.ts).
describe('fuzzing attacks', () => attackSuite({ runs: 40, timeoutMs: 120_000, seed: 11 }));
