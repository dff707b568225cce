import { describe } from 'vitest';
import { attackSuite, fuzzSeed } from '../helpers/fuzz';

// A new random seed each run (printed); replay a failure with the command in docs/reliability.md.
// Routes and GraphQL documents: test/hardening/model-fuzz.test.ts.
const seed = fuzzSeed('long fuzz', Math.floor(Math.random() * 2 ** 31));
describe('fuzzing attacks, long run', () => attackSuite({ runs: 500, timeoutMs: 600_000, seed }));
