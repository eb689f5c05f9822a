/** A statement's plan as the database would run it, as text: SQLite's `explain query plan`, PostgreSQL's `explain`. */
import type { Compilable } from 'kysely';
import type { Store } from '../../src/store/store.js';

/**
 * `asCursor`: on PostgreSQL, the plan of the statement declared as a cursor, as Connections.readInChunks
 * runs it (planned for its first rows).
 */
export async function queryPlan(store: Pick<Store, 'db' | 'engine'>, query: Compilable, options: { asCursor?: boolean } = {}): Promise<string> {
  const compiled = query.compile();
  const prefix = store.engine === 'sqlite' ? 'explain query plan ' : `explain (format text) ${options.asCursor ? 'declare plan_of no scroll cursor for ' : ''}`;
  const { rows } = await store.db.executeQuery<Record<string, string>>({ ...compiled, sql: prefix + compiled.sql });
  return rows.map((row) => row.detail ?? row['QUERY PLAN']).join('\n');
}
