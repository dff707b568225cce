import { describe } from 'vitest';
import { attackSuite, fuzzSeed } from '../helpers/fuzz';

// Attack classes of resource governance (attackSuite in helpers/fuzz.ts): a quick, deterministic
// pass (fixed seed; FUZZ_SEED replays another). Requests over every route and GraphQL documents are
// fuzzed statefully by test/platform/model-fuzz.test.ts.
const seed = fuzzSeed('quick fuzz', 20261122);
describe('fuzzing attacks', () => attackSuite({ runs: 40, timeoutMs: 120_000, seed }));
