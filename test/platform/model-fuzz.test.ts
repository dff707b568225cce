import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzSeed } from '../helpers/fuzz';
import { runModelFuzz, startModelFuzz, type ModelFuzz } from '../helpers/model-fuzz';

// The quick pass of the model-based fuzzer (docs/reliability.md): a fixed seed, so `npm test`
// is deterministic; FUZZ_SEED (with FUZZ_PATH and FUZZ_REPLAY from a failure) replays another run.
let f: ModelFuzz;
beforeAll(async () => {
  f = await startModelFuzz();
});
afterAll(() => f.close());

it('model-based fuzz, quick pass: no 5xx, refused requests change nothing, 2xx agree with the model, no cross-community ids', async () => {
  const seed = fuzzSeed('model fuzz (quick)', 24);
  const stats = await runModelFuzz(f, { maxCommands: 60, totalCommands: 2500, seed, path: process.env.FUZZ_PATH || undefined, replay: process.env.FUZZ_REPLAY || undefined });
  console.log(`model fuzz (quick): ${stats.commands} commands, ${stats.requests} requests, statuses ${JSON.stringify(stats.statuses)}, ${stats.resyncs} resyncs`);
  expect(stats.commands).toBeGreaterThan(0);
}, 120_000);
