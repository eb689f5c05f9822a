import { type Kysely, sql } from 'kysely';

/**
 * The background refresh (CONTRACT 5, KEYWARD_BACKGROUND_REFRESH_HOURS; services/oauth/background-refresh.ts).
 *
 * credentials_refresh_due serves its one question on any table size: the active OAuth credentials
 * whose last refresh attempt (or, never attempted, their connection) is oldest, in that order, from a
 * position on. It is partial, so static credentials and those that need the end user again are not in
 * it at all, and on the expression the query orders by, then the id that breaks ties. Both engines
 * use it only where the query repeats the expression as written here and implies its condition:
 * jobs-repository.ts does (test/store/jobs-repository.test.ts reads both engines' plans).
 *
 * job_leases: one row per background job while a node runs it, taken by a guarded upsert, so that one
 * node at a time runs the job. A lease in a row, rather than a transaction-scoped advisory lock: the
 * job calls providers, which must not happen inside a database transaction. A node that dies leaves a
 * lease that runs out.
 */
export function backgroundRefreshMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`create index credentials_refresh_due on credentials ((coalesce(refresh_attempted_at, connected_at)), id)
        where type = 'oauth2' and status = 'active'`.execute(db);
      await db.schema
        .createTable('job_leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
