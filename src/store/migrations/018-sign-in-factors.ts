import type { Kysely } from 'kysely';
import type { Engine } from '../connections.js';
import { refuseRetiredKeys } from './013-retired-master-keys.js';

/**
 * How a dashboard user proves who they are, beyond a password (CONTRACT 9): one-time codes and an
 * account's single sign-on.
 *
 * user_totp: a user's TOTP secret (RFC 6238), sealed like every secret, under its user's id;
 * `enabled_at` is null until the first code confirms it (an enrolment left unconfirmed is replaced by
 * the next one). `last_step` is the time step of the last code accepted, so that no code is accepted
 * twice: a code is accepted only for a step after it, and the guarded UPDATE that moves it is what
 * accepts it, on every node at once.
 *
 * user_recovery_codes: ten per user, stored as digests, each spent by a guarded UPDATE of `used_at`.
 *
 * account_sso: an account's OpenID Connect provider: its issuer, client id and sealed client secret,
 * the email domains that may sign in through it (a JSON array), and the role a new person joins with.
 * account_users.sso_subject is the issuer's `sub` of a user who signed in through it (the Team page
 * and `user list` show `sso`).
 *
 * accounts.require_mfa and require_sso: the account's policies (0/1).
 *
 * Each sealed column refuses a value sealed under a retired master key (migration 013).
 */
export function signInFactorsMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('user_totp')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('account_users.id').onDelete('cascade'))
        .addColumn('secret', engine === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('enabled_at', 'text')
        .addColumn('last_step', 'bigint')
        .execute();
      await refuseRetiredKeys(db, engine, 'user_totp', 'secret');

      await db.schema
        .createTable('user_recovery_codes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('account_users.id').onDelete('cascade'))
        .addColumn('code_digest', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .execute();
      await db.schema.createIndex('user_recovery_codes_user').on('user_recovery_codes').columns(['user_id', 'code_digest']).execute();

      await db.schema
        .createTable('account_sso')
        .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('client_secret', engine === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('allowed_domains', 'text', (c) => c.notNull())
        .addColumn('default_role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await refuseRetiredKeys(db, engine, 'account_sso', 'client_secret');

      await db.schema.alterTable('account_users').addColumn('sso_subject', 'text').execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('require_mfa', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('require_sso', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
