import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * A one-row version of everything the management guard reads: every change that can close a door
 * (a key revoked, expired or deleted, a server key rotated out, a server switched to personal mode,
 * moved to another account or deleted) bumps it in the change's own transaction, by a trigger, so
 * no write path (API, dashboard, CLI in another process, an operator's SQL) can forget to. Each node
 * keeps the guard's lookups in memory and checks this version on every request (auth-lookups.ts):
 * a request that starts after the change commits sees the new version and reads the keys afresh
 * (a proxied call on PostgreSQL once its node has heard of it: migration 024).
 *
 * Only rows that change, in the columns that decide a guard's answer, fire it: lastUsedAt and the
 * browser-exposure record change on their own schedule and must not empty every node's cache.
 */
const WATCHED: [table: string, columns: string[]][] = [
  ['account_keys', ['account_id', 'digest', 'revoked_at', 'expires_at']],
  ['server_keys', ['server_id', 'digest', 'expires_at']],
  ['servers', ['account_id', 'mode']],
];

export function authVersionMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('auth_version')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into auth_version (id, version) values (1, 1)`.execute(db);

      if (engine === 'postgres') {
        await sql`create function keyward_bump_auth_version() returns trigger language plpgsql as $$
          begin
            update auth_version set version = version + 1 where id = 1;
            return null;
          end $$`.execute(db);
      }
      for (const [table, columns] of WATCHED) {
        for (const [event, name] of [
          [`update of ${columns.join(', ')}`, 'update'],
          ['delete', 'delete'],
        ] as const) {
          const trigger = sql.raw(`${table}_${name}_bumps_auth_version`);
          const on = sql.raw(`after ${event} on ${table}`);
          if (engine === 'postgres') {
            // For each row: a statement trigger would fire on statements that change nothing too (the
            // sweep's delete of old server keys on every run), emptying every node's cache for nothing.
            await sql`create trigger ${trigger} ${on} for each row execute function keyward_bump_auth_version()`.execute(db);
          } else {
            await sql`create trigger ${trigger} ${on} begin update auth_version set version = version + 1 where id = 1; end`.execute(db);
          }
        }
      }
    },
  };
}
