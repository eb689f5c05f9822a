import { type Kysely, sql } from 'kysely';

/**
 * The expiry notices (CONTRACT 10, last paragraph; services/expiry-notices/): a flow or hosted form
 * nobody finished sends `connect.failed` with `error: "expired"` soon after its expiry, once.
 *
 * Each is marked by its status, by a guarded UPDATE from `pending`: an OAuth flow ends `failed` with
 * `error_code` `expired` (the status its callback already leaves, so the callback's claim refuses it),
 * a hosted form ends `expired`, a status it gains here (its use is guarded on `pending` already). A
 * CHECK constraint cannot be changed in place on SQLite, so static_form_sessions is rebuilt under a
 * new name, its rows copied, and renamed back, with its indexes (the same steps on both engines, as
 * migration 002 did for oauth_flows).
 *
 * Each index serves the job's one question on any table size: the pending rows whose expiry is in a
 * window, in expiry order, from a position on. Partial on the status alone (a condition on one column,
 * which PostgreSQL estimates from its statistics; on two it would assume them independent and could
 * prefer the sweep's index on expires_at over a whole window), so rows that ended leave it; on
 * (expires_at, id), the order the job reads in. The job repeats the condition as a literal
 * (store/expiry-notices-repository.ts), which both engines need to use a partial index.
 */
export function expiryNoticesMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('static_form_sessions_next')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('external_user_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('redirect_uri', 'text')
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'completed', 'cancelled', 'expired')`))
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('credential_id', 'text')
        .execute();
      await sql`insert into static_form_sessions_next select id, server_id, external_user_id, provider, token_digest,
        redirect_uri, status, expires_at, created_at, completed_at, credential_id from static_form_sessions`.execute(db);
      await db.schema.dropTable('static_form_sessions').execute();
      await db.schema.alterTable('static_form_sessions_next').renameTo('static_form_sessions').execute();
      await db.schema.createIndex('static_form_sessions_member').on('static_form_sessions').columns(['server_id', 'external_user_id', 'status']).execute();
      // The sweep's (migration 006).
      await db.schema.createIndex('static_form_sessions_expiry').on('static_form_sessions').column('expires_at').execute();

      await sql`create index static_form_sessions_expiry_due on static_form_sessions (expires_at, id) where status = 'pending'`.execute(db);
      await sql`create index oauth_flows_expiry_due on oauth_flows (expires_at, id) where status = 'pending'`.execute(db);
    },
  };
}
