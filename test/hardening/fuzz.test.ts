import { describe } from 'vitest';
import { attackSuite, fuzzSeed, fuzzSuite } from '../helpers/fuzz';

// A new random seed each run (printed); replay a failure with the command in docs/reliability.md.
const seed = fuzzSeed('long fuzz', Math.floor(Math.random() * 2 ** 31));
describe('fuzzing, long run', () => fuzzSuite({ routeRuns: 10_000, graphqlRuns: 1_000, timeoutMs: 600_000, seed }));

describe('fuzzing attacks, long run', () => attackSuite({ runs: 500, timeoutMs: 600_000, seed }));
