import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzSeed } from '../helpers/fuzz';
import { runModelFuzz, startModelFuzz, type ModelFuzz } from '../helpers/model-fuzz';

// The long run of the model-based fuzzer (docs/reliability.md): a fresh seed each time,
// printed first; FUZZ_SEED=<seed> replays it, and FUZZ_PATH and FUZZ_REPLAY (printed with a
// failure) replay just its shrunk command list.
// FUZZ_COMMANDS changes the number of commands (default 10,000).
let f: ModelFuzz;
beforeAll(async () => {
  f = await startModelFuzz();
});
afterAll(() => f.close());

const total = Number(process.env.FUZZ_COMMANDS || 10_000);

it(`model-based fuzz: ${total} commands over both APIs, two communities, hostile requests at every layer`, async () => {
  const seed = fuzzSeed('model fuzz (hardening)', Date.now() ^ (Math.random() * 2 ** 31));
  const started = Date.now();
  const stats = await runModelFuzz(f, { maxCommands: 200, totalCommands: total, seed, path: process.env.FUZZ_PATH || undefined, replay: process.env.FUZZ_REPLAY || undefined });
  console.log(
    `model fuzz (hardening): seed ${seed}, ${stats.commands} commands, ${stats.requests} requests in ${Math.round((Date.now() - started) / 1000)} s, ` +
      `statuses ${JSON.stringify(stats.statuses)}, ${stats.resyncs} resyncs`,
  );
  if (!process.env.FUZZ_PATH) expect(stats.commands).toBeGreaterThanOrEqual(total);
}, 3_600_000);
