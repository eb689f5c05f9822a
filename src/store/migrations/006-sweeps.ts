import type { Kysely } from 'kysely';

/**
 * Indexes for the sweeps (services/retention/sweeps.ts): each run looks for rows past a time in these columns,
 * and without an index that is a scan of the whole table every few minutes. (idempotency_records
 * already has one on expires_at.)
 */
export function sweepsMigration() {
  const indexes: [name: string, table: string, column: string][] = [
    ['static_form_sessions_expiry', 'static_form_sessions', 'expires_at'],
    ['oauth_flows_expiry', 'oauth_flows', 'expires_at'],
    ['dashboard_sessions_expiry', 'dashboard_sessions', 'expires_at'],
    ['server_keys_expiry', 'server_keys', 'expires_at'],
    ['audit_events_created', 'audit_events', 'created_at'],
  ];
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [name, table, column] of indexes) await db.schema.createIndex(name).on(table).column(column).execute();
    },
  };
}
