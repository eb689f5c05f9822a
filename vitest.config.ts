import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ rebuilt if src/ changed since (the CLI and serve processes under test run it), then one
    // real PostgreSQL server for the whole run; each test file gets its own database in it.
    globalSetup: ['test/helpers/global-build.ts', 'test/helpers/global-postgres.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    maxWorkers: 2,
  },
});
