import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * The people who sign in to an account's dashboard become its users: table `members` is renamed
 * `account_users`, `dashboard_sessions.member_id` is renamed `user_id`, and the actors stored as
 * `member:usr_…` (the audit trail, and who created or revoked an account key) become `user:usr_…`.
 * From here on "member" names only a member of a server's audience (`audience_members`, `mem_…`).
 *
 * Rows, keys and references stay as they are: SQLite rewrites the foreign key of dashboard_sessions
 * and the indexes on a renamed table or column itself, PostgreSQL follows them by identity. Only names
 * that spell the old word are redone: the sessions' index (SQLite cannot rename an index, so it is
 * made again) and, on PostgreSQL, the constraints named after the table and column.
 */
export function accountUsersMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`alter table members rename to account_users`.execute(db);
      await sql`alter table dashboard_sessions rename column member_id to user_id`.execute(db);
      if (engine === 'postgres') {
        await sql`alter index dashboard_sessions_member rename to dashboard_sessions_user`.execute(db);
        for (const [table, from, to] of [
          ['account_users', 'members_pkey', 'account_users_pkey'],
          ['account_users', 'members_email_key', 'account_users_email_key'],
          ['account_users', 'members_account_id_fkey', 'account_users_account_id_fkey'],
          ['dashboard_sessions', 'dashboard_sessions_member_id_fkey', 'dashboard_sessions_user_id_fkey'],
        ] as const) {
          await sql`alter table ${sql.raw(table)} rename constraint ${sql.raw(from)} to ${sql.raw(to)}`.execute(db);
        }
      } else {
        await sql`drop index dashboard_sessions_member`.execute(db);
        await sql`create index dashboard_sessions_user on dashboard_sessions (user_id)`.execute(db);
      }
      // substr rather than LIKE: LIKE ignores case on SQLite, and "member:" is 7 characters on both.
      for (const [table, column] of [
        ['audit_events', 'actor'],
        ['account_keys', 'created_by'],
        ['account_keys', 'revoked_by'],
      ] as const) {
        const c = sql.raw(column);
        await sql`update ${sql.raw(table)} set ${c} = 'user:' || substr(${c}, 8) where substr(${c}, 1, 7) = 'member:'`.execute(db);
      }
    },
  };
}
