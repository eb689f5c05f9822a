import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * `servers.secrets_readable` (CONTRACT 8.2): 1 unless the server was made write-only, where the member
 * read withholds every secret and the gateway is the only way a credential is used. The guard reads it
 * with the server key, so a change bumps the auth version as a mode change does (migration 007): a
 * request that starts after it commits, on any node, sees it.
 */
export function serverSecretsReadableMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('servers')
        .addColumn('secrets_readable', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      const trigger = sql.raw('servers_secrets_readable_bumps_auth_version');
      if (engine === 'postgres') {
        await sql`create trigger ${trigger} after update of secrets_readable on servers for each row execute function keyward_bump_auth_version()`.execute(db);
      } else {
        await sql`create trigger ${trigger} after update of secrets_readable on servers begin update auth_version set version = version + 1 where id = 1; end`.execute(
          db,
        );
      }
    },
  };
}
