import type { ColumnDataType, Kysely } from 'kysely';
import type { Engine } from '../connections.js';
import { refuseRetiredKeys } from './013-retired-master-keys.js';

/**
 * `instance_secrets`: random secrets of the whole installation, one per use, sealed under the master
 * key like any other value (resealed by a rotation, refused under a retired key). The first is the
 * key of the sign-in attempt count (issue 17, item 3): derived from the master key, as it was, every
 * node counted an email in a row of its own key, so a rotation (nodes on two keys) doubled the
 * guesses and reset the count. One secret in the database, the same for every node whatever key it
 * runs on, keeps the email out of the table as the master key's MAC did, and a stolen database
 * without the master key still cannot be searched for an email.
 *
 * The attempt rows keyed by the old MAC are left alone: their email is not known, so they cannot be
 * keyed again, and each lasts at most its 15-minute window before the sweep removes it. A lock-out
 * under way when this is deployed starts its count again, once.
 */
export function instanceSecretsMigration(engine: Engine) {
  const bytes: ColumnDataType = engine === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('instance_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('secret', bytes, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await refuseRetiredKeys(db, engine, 'instance_secrets', 'secret');
    },
  };
}
