/**
 * Migration 024's trigger on credentials (store/change-feed.ts): every column notifies when set but
 * the bookkeeping it names as not watched, so a column added to the table without being placed in one
 * of its two lists fails here.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNWATCHED_CREDENTIAL_COLUMNS } from '../../src/store/migrations/024-change-feed.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe('the change feed’s trigger on credentials (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('postgres');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('fires for every column but the unwatched ones', async () => {
    const client = new pg.Client(t.database.url);
    await client.connect();
    try {
      const columns = await client.query<{ name: string }>(
        "select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'credentials'",
      );
      const fired = await client.query<{ name: string }>(
        "select event_object_column as name from information_schema.triggered_update_columns where trigger_name = 'credentials_update_announce_change'",
      );
      const all = columns.rows.map((row) => row.name).sort();
      const watched = fired.rows.map((row) => row.name).sort();
      expect(watched.length).toBeGreaterThan(10);
      expect(all.filter((name) => !watched.includes(name)).sort()).toEqual([...UNWATCHED_CREDENTIAL_COLUMNS].sort());
    } finally {
      await client.end();
    }
  });
});
