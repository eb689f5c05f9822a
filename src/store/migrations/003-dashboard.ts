import type { Kysely } from 'kysely';

/**
 * The dashboard: its users' sign-in sessions (only a digest of the cookie's token is stored) and the
 * per-user count of failed sign-ins behind the lock-out, kept in the database so that every node
 * sees the same count. The users' table was still called `members` here (012 renames it and the
 * sessions' column `account_users` and `user_id`).
 */
export function dashboardMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_sessions_member').on('dashboard_sessions').column('member_id').execute();
      await db.schema
        .alterTable('members')
        .addColumn('failed_sign_ins', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('members').addColumn('locked_until', 'text').execute();
    },
  };
}
