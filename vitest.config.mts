import { createRequire } from 'node:module';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export const shared = {
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    // type-graphql loads graphql through require(); the app must share that one copy.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    exclude: ['**/node_modules/**', 'test/hardening/**'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['reflect-metadata'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
}

export default defineConfig(shared);
