import { randomBytes } from 'node:crypto';
import { afterAll, inject } from 'vitest';
import { scratchDatabase } from './helpers/schema';

/**
 * Each test file runs on a database of its own, cloned from the run's migrated one
 * (test/global-setup.ts) before the file's first test and dropped after its last: files run
 * side by side (vitest's workers), and one file's job workers must not run another file's jobs,
 * nor its rows shift another file's counts. `testDatabaseUrl()` (test/helpers/database.ts) is its
 * address.
 */
const run = new URL(inject('databaseUrl')).pathname.slice(1);
const own = await scratchDatabase(inject('databaseUrl'), `${run}_${randomBytes(4).toString('hex')}`, run);
process.env.TEST_DATABASE_URL = own.url;

// Registered first, so it runs after the file's own afterAll hooks (vitest's default 'stack' order).
afterAll(() => own.drop());
