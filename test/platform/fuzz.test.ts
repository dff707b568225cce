import { describe } from 'vitest';
import { attackSuite, fuzzSeed, fuzzSuite } from '../helpers/fuzz';

// A quick, deterministic pass in every `npm test` (fixed seed; FUZZ_SEED and FUZZ_RUNS override
// it to replay a case). `npm run test:hardening` sends 10,000 requests with a new seed each run.
const seed = fuzzSeed('quick fuzz', 20261122);
describe('fuzzing', () => fuzzSuite({ routeRuns: Number(process.env.FUZZ_RUNS ?? 300), graphqlRuns: 100, timeoutMs: 120_000, seed }));

// Attack classes of resource governance (attackSuite in helpers/fuzz.ts), same seed.
describe('fuzzing attacks', () => attackSuite({ runs: 40, timeoutMs: 120_000, seed }));
