import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { initialMigration } from './migrations/001-initial.js';
import { oauthFlowsMigration } from './migrations/002-oauth-flows.js';
import { dashboardMigration } from './migrations/003-dashboard.js';
import { masterKeysMigration } from './migrations/004-master-keys.js';
import { dashboardFormsMigration } from './migrations/005-dashboard-forms.js';
import { sweepsMigration } from './migrations/006-sweeps.js';
import { authVersionMigration } from './migrations/007-auth-version.js';
import { audienceFiltersMigration } from './migrations/008-audience-filters.js';
import { rateLimitsMigration } from './migrations/009-rate-limits.js';
import { webhooksMigration } from './migrations/010-webhooks.js';
import { backgroundRefreshMigration } from './migrations/011-background-refresh.js';
import { accountUsersMigration } from './migrations/012-account-users.js';
import { retiredMasterKeysMigration } from './migrations/013-retired-master-keys.js';
import { instanceSecretsMigration } from './migrations/014-instance-secrets.js';
import { serverSecretsReadableMigration } from './migrations/015-server-secrets-readable.js';
import { credentialUsageMigration } from './migrations/016-credential-usage.js';
import { teamMigration } from './migrations/017-team.js';
import { signInFactorsMigration } from './migrations/018-sign-in-factors.js';
import { endUserProfileMigration } from './migrations/019-end-user-profile.js';
import { serverBrandingMigration } from './migrations/020-server-branding.js';
import { connectSessionsMigration } from './migrations/021-connect-sessions.js';
import { expiryNoticesMigration } from './migrations/022-expiry-notices.js';
import { connectPopupFlowsMigration } from './migrations/023-connect-popup-flows.js';
import { changeFeedMigration } from './migrations/024-change-feed.js';
import type { Store } from './store.js';

/**
 * Brings the schema up to date. Safe to run at every start-up and from the CLI, on both engines, from
 * several processes at once: Kysely's Migrator records what ran and, on PostgreSQL, takes a lock.
 */
export function migrateToLatest(store: Store): Promise<string[]> {
  return migrate(store, null);
}

/** Brings the schema up to the named migration and no further: what a test of the next one starts from. */
export function migrateUpTo(store: Store, name: string): Promise<string[]> {
  return migrate(store, name);
}

async function migrate(store: Store, upTo: string | null): Promise<string[]> {
  const migrations: Record<string, Migration> = {
    '001-initial': initialMigration(store.engine),
    '002-oauth-flows': oauthFlowsMigration(store.engine),
    '003-dashboard': dashboardMigration(),
    '004-master-keys': masterKeysMigration(store.engine),
    '005-dashboard-forms': dashboardFormsMigration(),
    '006-sweeps': sweepsMigration(),
    '007-auth-version': authVersionMigration(store.engine),
    '008-audience-filters': audienceFiltersMigration(store.engine),
    '009-rate-limits': rateLimitsMigration(),
    '010-webhooks': webhooksMigration(store.engine),
    '011-background-refresh': backgroundRefreshMigration(),
    '012-account-users': accountUsersMigration(store.engine),
    '013-retired-master-keys': retiredMasterKeysMigration(store.engine),
    '014-instance-secrets': instanceSecretsMigration(store.engine),
    '015-server-secrets-readable': serverSecretsReadableMigration(store.engine),
    '016-credential-usage': credentialUsageMigration(),
    '017-team': teamMigration(),
    '018-sign-in-factors': signInFactorsMigration(store.engine),
    '019-end-user-profile': endUserProfileMigration(store.engine),
    '020-server-branding': serverBrandingMigration(store.engine),
    '021-connect-sessions': connectSessionsMigration(),
    '022-expiry-notices': expiryNoticesMigration(),
    '023-connect-popup-flows': connectPopupFlowsMigration(),
    '024-change-feed': changeFeedMigration(store.engine),
  };
  const run = async (db: Kysely<unknown>, disableTransactions: boolean) => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => migrations },
      migrationTableName: 'keyward_migrations',
      migrationLockTableName: 'keyward_migrations_lock',
      disableTransactions,
    });
    const { error, results } = await (upTo === null ? migrator.migrateToLatest() : migrator.migrateTo(upTo));
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  if (store.engine === 'postgres') return run(store.db as Kysely<unknown>, false);

  // On SQLite the Migrator's lock is a no-op and its transaction starts deferred, so two processes
  // could both find a migration pending. BEGIN IMMEDIATE takes the write lock before anything is read.
  return store.db.connection().execute(async (connection) => {
    await sql`BEGIN IMMEDIATE`.execute(connection);
    try {
      const applied = await run(connection as Kysely<unknown>, true);
      await sql`COMMIT`.execute(connection);
      return applied;
    } catch (error) {
      await sql`ROLLBACK`.execute(connection);
      throw error;
    }
  });
}
