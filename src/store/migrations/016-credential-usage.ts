import { type Kysely, sql } from 'kysely';

/**
 * A credential's use and its checks (CONTRACT 8.3 and 8.4).
 *
 * credentials.last_used_at: the last read with its secrets or proxied call, written at most once a
 * minute by a guarded UPDATE (services/credentials/usage.ts). last_check_at and last_check_outcome:
 * the last check of a static credential's values at its provider ('valid', 'rejected' or
 * 'unreachable'). The background check also stamps last_check_at with no outcome on a credential it
 * could not check (its provider has no verify request): that moves it to the end of the queue
 * without inventing an outcome, and lastCheck stays null (services/checks/credential-checks.ts).
 *
 * credentials_check_due serves the background check's one question on any table size: the active
 * static credentials checked longest ago, never-checked first (an empty string sorts before every
 * time), from a position on. Partial and on the expression the query orders by, then the id, as
 * credentials_refresh_due is (migration 011): jobs-repository.ts repeats both exactly.
 */
export function credentialUsageMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('credentials').addColumn('last_used_at', 'text').execute();
      await db.schema.alterTable('credentials').addColumn('last_check_at', 'text').execute();
      await db.schema.alterTable('credentials').addColumn('last_check_outcome', 'text').execute();
      await sql`create index credentials_check_due on credentials ((coalesce(last_check_at, '')), id)
        where type = 'static' and status = 'active'`.execute(db);
    },
  };
}
