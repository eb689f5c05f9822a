/** For the master-key suites: a one-line start-up refusal, a whole-database snapshot, key ids. */
import { sql } from 'kysely';
import { expect } from 'vitest';
import { masterKeyId } from '../../src/services/vault.js';
import type { Store } from '../../src/store/database.js';
import type { CliRun } from './cli-process.js';

/** The key id (hex) a base64 master key is recorded under. */
export const keyIdOf = (key: string): string => masterKeyId(Buffer.from(key, 'base64')).toString('hex');

/** Refused as a configuration error: exit 1, nothing on stdout, exactly one line on stderr naming `variable`, no key in it. */
export function expectOneLineRefusal(run: CliRun, variable: string, keys: string[] = []): void {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.endsWith('\n')).toBe(true);
  expect(run.stderr.slice(0, -1).split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(new RegExp(`^keyward: ${variable}: `));
  for (const key of keys) expect(run.stderr).not.toContain(key);
}

/**
 * Every row of every table, found by introspection so that tables added later (master_keys…) count
 * too, sealed bytes as hex: to prove a refused start wrote nothing.
 */
export async function snapshotDatabase(store: Store): Promise<Record<string, string[]>> {
  const tables = (await store.db.introspection.getTables()).map((t) => t.name).sort();
  const snapshot: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await store.db.selectFrom(sql.table(table).as('t')).selectAll().execute();
    snapshot[table] = rows.map((row) => JSON.stringify(row, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).sort();
  }
  return snapshot;
}
