import type { Kysely } from 'kysely';

/**
 * Dashboard forms that must act once, and sign-in attempts counted per email.
 *
 * - `dashboard_form_uses`: the one-time nonce of every form that creates something, recorded when it
 *   is used; the primary key makes a resubmitted form (a reload, a double click) lose, on every node.
 * - `sign_in_attempts`: the lock-out count, keyed by a MAC of the email rather than by user, so an
 *   email without an account is counted and locked exactly like one with an account (nothing tells
 *   them apart). It replaces the per-user columns of 003, which are dropped.
 *
 * Both carry the time after which a row means nothing, so a sweep can delete them in batches.
 */
export function dashboardFormsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('dashboard_form_uses')
        .addColumn('nonce', 'text', (c) => c.primaryKey())
        .addColumn('used_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_form_uses_expiry').on('dashboard_form_uses').column('expires_at').execute();
      await db.schema
        .createTable('sign_in_attempts')
        .addColumn('email_mac', 'text', (c) => c.primaryKey())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('window_ends', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sign_in_attempts_window').on('sign_in_attempts').column('window_ends').execute();
      await db.schema.alterTable('members').dropColumn('failed_sign_ins').execute();
      await db.schema.alterTable('members').dropColumn('locked_until').execute();
    },
  };
}
