import { Migrator, type Migration } from 'kysely';
import type { Store } from './database.js';
import { initialMigration } from './migrations/001-initial.js';

/**
 * Brings the schema up to date. Safe to run at every start-up and from the CLI, on both engines, from
 * several nodes at once: Kysely's Migrator records what ran and takes a lock while it runs.
 */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const migrations: Record<string, Migration> = {
    '001-initial': initialMigration(store.engine),
  };
  const migrator = new Migrator({
    db: store.db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'keyward_migrations',
    migrationLockTableName: 'keyward_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
