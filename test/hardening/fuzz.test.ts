import { describe } from 'vitest';
import { fuzzSuite } from '../helpers/fuzz';

describe('fuzzing, long run', () => fuzzSuite({ routeRuns: 10_000, graphqlRuns: 1_000, timeoutMs: 600_000 }));
