/**
 * A fresh, real database for one test: an SQLite file in a temp folder, or a new database on the
 * PostgreSQL server the global setup started.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { Engine } from '../../src/store/store.js';

export const ENGINES: Engine[] = ['sqlite', 'postgres'];

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
  const adminUrl = inject('postgresAdminUrl');
  const name = `keyward_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    engine,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client(adminUrl);
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
