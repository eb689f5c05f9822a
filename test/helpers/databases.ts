/**
 * A fresh, real database for one test: an SQLite file in a temp folder, or a new database on the
 * PostgreSQL server the global setup started.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Engine } from '../../src/store/store.js';
import { createPostgresDatabase } from './embedded-postgres.js';

export const ENGINES: Engine[] = ['sqlite', 'postgres'];

/** Every migration, in order: what a new database applies once (written out here, so a test sees one go missing). */
export const ALL_MIGRATIONS = [
  '001-initial',
  '002-oauth-flows',
  '003-dashboard',
  '004-master-keys',
  '005-dashboard-forms',
  '006-sweeps',
  '007-auth-version',
  '008-audience-filters',
  '009-rate-limits',
  '010-webhooks',
  '011-background-refresh',
  '012-account-users',
  '013-retired-master-keys',
  '014-instance-secrets',
  '015-server-secrets-readable',
  '016-credential-usage',
  '017-team',
  '018-sign-in-factors',
  '019-end-user-profile',
  '020-server-branding',
  '021-connect-sessions',
  '022-expiry-notices',
  '023-connect-popup-flows',
  '024-change-feed',
];

export interface TestDatabase {
  engine: Engine;
  url: string;
  /** The SQLite file (undefined on PostgreSQL). */
  file?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(engine: Engine): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-test-'));
    const file = join(dir, 'keyward.db');
    return { engine, url: `sqlite:${file}`, file, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const { url, drop } = await createPostgresDatabase(inject('postgresAdminUrl'), 'keyward_test');
  return { engine, url, drop };
}
