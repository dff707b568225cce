/** This test file's own database (test/file-database.ts clones it from the run's migrated one). */
export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is unset: test/file-database.ts must be among the setup files');
  return url;
}
