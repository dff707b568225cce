import { describe } from 'vitest';
import { attackSuite, fuzzSuite } from '../helpers/fuzz';

describe('fuzzing, long run', () => fuzzSuite({ routeRuns: 10_000, graphqlRuns: 1_000, timeoutMs: 600_000 }));

describe('fuzzing attacks, long run', () => attackSuite({ runs: 500, timeoutMs: 600_000, seed: 1111 }));
