/**
 * The statements that go straight to pg's pool on PostgreSQL, not through Kysely's executeQuery: the
 * per-request reads (Connections.reader) and the write path's statements that run alone
 * (Connections.runAlone: the webhook dispatcher's claim and its batched outcomes). Their text is
 * compiled already (prepared.ts), and Kysely's own checkout, query and release of a client cost more
 * CPU than pool.query. A statement that prepared.ts named goes as a named prepared statement: each
 * connection parses, plans and describes its text once, then sends only Bind and Execute
 * (described-statement.ts), where an unnamed statement sends the whole text to be parsed and planned
 * again on every call. Errors are classified as the dialect's are.
 */
import type pg from 'pg';
import type { QueryRunner } from './connections.js';
import { DescribedStatement, type RowsCallback } from './described-statement.js';
import { storeError } from './store-errors.js';

/**
 * SQLSTATEs after which a named statement is sent once more under a fresh name:
 * - 0A000 "cached plan must not change result type": in a rolling upgrade another node migrated a
 *   table the statement reads so that its result changed (a selected column's type changed, or a
 *   column of a `*` came or went). PostgreSQL will not change the result of a statement a connection
 *   prepared before, so it fails on that connection until the connection closes.
 * - 26000 "prepared statement does not exist": pg believes the connection parsed it, but the server
 *   no longer has it (a DEALLOCATE or DISCARD by someone else, a pooler in front of the server).
 * Parsed under a fresh name, the text is planned against the schema as it stands, so the request
 * succeeds. Both are safe to retry, writes included: every statement sent here runs alone, outside
 * any transaction, and a statement that fails is rolled back whole, so nothing of it was written.
 */
const STALE_STATEMENT_CODES: ReadonlySet<unknown> = new Set(['0A000', '26000']);

const rowsOf = (result: pg.QueryResult) => result.rows;

/**
 * Runs a named statement on a client of the pool (described-statement.ts). pg-pool takes any pg
 * Submittable with a callback, which it wraps to release the client; pg's typings know only the form
 * without one.
 */
function runNamed(pool: pg.Pool, name: string, text: string, values: readonly unknown[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const query = pool.query as unknown as (statement: DescribedStatement, callback: RowsCallback) => void;
    query.call(pool, new DescribedStatement(name, text, values), (error, result) => (error ? reject(error) : resolve(result!.rows)));
  });
}

const rethrowClassified = (error: unknown): never => {
  throw storeError(error);
};

export function postgresRunner(pool: pg.Pool): QueryRunner {
  /**
   * A statement's name after it went stale once (its first name stays its key). The fresh name
   * serves every later call, so each connection parses the text once more rather than failing on
   * every read until it closes; the stale statement stays on the connections that had it (a few per
   * migration) until they close.
   */
  const renamed = new Map<string, string>();
  let freshNames = 0;

  return (text, values, name) => {
    if (name === undefined) return pool.query(text, values as unknown[]).then(rowsOf, rethrowClassified);
    const current = renamed.size === 0 ? name : (renamed.get(name) ?? name);
    return runNamed(pool, current, text, values).catch((error: unknown) => {
      if (!STALE_STATEMENT_CODES.has((error as { code?: unknown } | null)?.code)) throw storeError(error);
      freshNames += 1;
      const fresh = `${name}_${freshNames}`;
      renamed.set(name, fresh);
      return runNamed(pool, fresh, text, values).catch(rethrowClassified);
    });
  };
}
