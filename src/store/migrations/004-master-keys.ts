import type { ColumnDataType, Kysely } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * One row per master key the data has been sealed under: its id and a check value sealed with it, so
 * that start-up can tell a wrong KEYWARD_MASTER_KEY before it answers a single read (CONTRACT 5).
 * `retired_at` is set once `keyward master-key rotate` has moved every value off that key.
 */
export function masterKeysMigration(engine: Engine) {
  const bytes: ColumnDataType = engine === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('master_keys')
        .addColumn('key_id', 'text', (c) => c.primaryKey())
        .addColumn('check_value', bytes, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('retired_at', 'text')
        .execute();
    },
  };
}
