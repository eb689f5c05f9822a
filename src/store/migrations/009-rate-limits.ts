import type { Kysely } from 'kysely';

/**
 * The per-key rate limit shared by every node (auth/key-quota.ts): one row per account key holding
 * its current one-minute window and how much of the limit the nodes have leased in it. A node writes
 * here once per lease, not once per request. The index serves the sweep of windows long over.
 */
export function rateLimitsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('rate_limit_windows')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('granted', 'integer', (c) => c.notNull())
        .addColumn('last_grant', 'integer', (c) => c.notNull())
        .addColumn('nodes', 'integer', (c) => c.notNull())
        .addColumn('previous_nodes', 'integer', (c) => c.notNull())
        .addColumn('leases', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('rate_limit_windows_start').on('rate_limit_windows').column('window_start').execute();
    },
  };
}
