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
    setupFiles: ['reflect-metadata'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
}

export default defineConfig(shared);
