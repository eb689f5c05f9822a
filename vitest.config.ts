import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One real PostgreSQL server for the whole run; each test file gets its own database in it.
    globalSetup: ['test/helpers/global-postgres.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    maxWorkers: 2,
  },
});
