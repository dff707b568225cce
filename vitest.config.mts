import { createRequire } from 'node:module';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// test/fixtures/ holds deliberately failing tests that prove `npm test` reports failure
// (.ci/run runs them with TEST_FIXTURES=1); they are never part of a normal run.
const fixtures = process.env.TEST_FIXTURES === '1';

export const shared = {
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    // type-graphql loads graphql through require(); the app must share that one copy.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    ...(fixtures ? { include: ['test/fixtures/**/*.test.ts'] } : {}),
    exclude: ['**/node_modules/**', 'test/hardening/**', ...(fixtures ? [] : ['test/fixtures/**'])],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['reflect-metadata', 'test/file-database.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time (vitest's default is one fewer than the cores: one on CI's two). Most
    // of a file's time is spent waiting on PostgreSQL, timers and child processes, so two cut the
    // wall time by a third or more; each file has its own database (test/file-database.ts), so
    // they cannot meet (docs/reliability.md, "Test files side by side").
    maxWorkers: 2,
  },
}

export default defineConfig(shared);
