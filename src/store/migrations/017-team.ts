import { type Kysely, sql } from 'kysely';

/**
 * The team (CONTRACT 9): an account's users get a role, their sign-in sessions say where they are,
 * and invitations bring new users in.
 *
 * account_users.role: every user before this migration was an account's only user, its creator, so
 * each becomes its account's `owner` (the column's default fills the existing rows; every insert from
 * here on names the role itself). last_sign_in_at: shown on the Team page and by `user list`.
 *
 * dashboard_sessions: `expires_at` is from here on the idle deadline (12 h after the last request,
 * moved forward at most once a minute), `ends_at` the absolute one (7 days after sign-in), and the
 * device's user agent, its address and the last request's time are kept for the "Security" page. A
 * session open across the upgrade ends when it would have ended before.
 *
 * team_invitations: only a digest of the link's token is stored, as for sessions. An invitation is
 * pending while it is neither used, revoked nor expired; team_invitations_account serves the Team
 * page's list of an account's invitations.
 *
 * The Audit page filters an account's events by who made them, by action, or both, newest first
 * from a position on (audit-repository.ts): one index per filter, each ending in the page's order
 * (time, then id), so that a page of a filtered trail is a range read however many events the
 * account has. The account's own index gains the id for the same reason (001's ended at the time,
 * which left ties to a sort and a position of two columns to no index at all on PostgreSQL).
 */
export function teamMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('account_users')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('owner'))
        .execute();
      await db.schema.alterTable('account_users').addColumn('last_sign_in_at', 'text').execute();
      await db.schema.createIndex('account_users_account').on('account_users').columns(['account_id', 'created_at']).execute();

      for (const column of ['ends_at', 'last_seen_at', 'user_agent', 'address']) {
        await db.schema.alterTable('dashboard_sessions').addColumn(column, 'text').execute();
      }
      await sql`update dashboard_sessions set ends_at = expires_at, last_seen_at = created_at`.execute(db);

      await db.schema
        .createTable('team_invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('invited_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addColumn('used_by', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('team_invitations_account').on('team_invitations').columns(['account_id', 'created_at']).execute();

      await db.schema.dropIndex('audit_events_account').execute();
      await db.schema.createIndex('audit_events_account').on('audit_events').columns(['account_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['account_id', 'actor', 'created_at', 'id']).execute();
      await db.schema.createIndex('audit_events_action').on('audit_events').columns(['account_id', 'action', 'created_at', 'id']).execute();
      await db.schema.createIndex('audit_events_actor_action').on('audit_events').columns(['account_id', 'actor', 'action', 'created_at', 'id']).execute();
    },
  };
}
