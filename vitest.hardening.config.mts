import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

// Slower tests against real service processes: `npm run test:hardening`.
export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: ['test/hardening/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 180_000,
    fileParallelism: false,
  },
});
