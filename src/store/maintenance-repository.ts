/** Statements that span tables: the sweeps of rows nothing needs any more, the health probe. */
import { sql } from 'kysely';
import { Repository } from './repository.js';
import type { Database } from './schema.js';

/** The advisory lock's key on PostgreSQL: any constant no other code uses ("kwsweep" in ASCII). */
const SWEEP_LOCK_KEY = 0x6b77737765657;

/** Rows of `table` whose `column` (an ISO time, or null) says when they ended; `key` names the columns that identify a row. */
export interface EndedRows {
  table: keyof Database;
  column: string;
  key: readonly string[];
}

export class MaintenanceRepository extends Repository {
  /** Resolves when the database answers a trivial statement. */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /**
   * Runs `run` as the one sweep of all nodes, or resolves to null where another node holds it. On
   * PostgreSQL that is one transaction that first takes pg_try_advisory_xact_lock: a lock scoped to
   * the transaction cannot be left behind by a crash or a pooled connection, and needs no table of
   * its own. On SQLite there is one node, and `run` runs outside any transaction, so each of its
   * statements commits alone and requests interleave with the sweep.
   */
  async asTheOnlySweep<T>(run: () => Promise<T>): Promise<T | null> {
    if (this.connections.engine !== 'postgres') return run();
    return this.connections.transaction(async () => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(SWEEP_LOCK_KEY)}) as locked`.execute(this.db);
      return rows[0]?.locked ? run() : null;
    });
  }

  /** Deletes at most `limit` of `rows` that ended at or before `cutoff`; how many it deleted. A null end never matches. */
  async deleteEnded(rows: EndedRows, cutoff: string, limit: number): Promise<number> {
    const key = sql.join(rows.key.map((column) => sql.ref(column)));
    const table = sql.table(rows.table);
    // A DELETE takes no LIMIT on PostgreSQL (nor on SQLite as built by default): pick the rows first.
    // The outer condition is checked again so that a row renewed meanwhile (a sign-in count that took
    // a new attempt) is kept.
    const ended = sql`${sql.ref(rows.column)} <= ${cutoff}`;
    const result = await sql`delete from ${table} where ${ended} and (${key}) in (
      select ${key} from ${table} where ${ended} limit ${limit})`.execute(this.db);
    return Number(result.numAffectedRows ?? 0n);
  }
}
