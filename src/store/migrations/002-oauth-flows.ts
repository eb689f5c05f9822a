import { type ColumnDataType, type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * The OAuth flows as they run: a flow is claimed (`exchanging`) before its code is swapped, so two
 * callbacks with the same state cannot both spend the code; a credential's refresh lease gets a
 * holder id, so a reader whose lease ran out cannot overwrite the tokens of the reader after it; and
 * the end of the last refresh attempt is kept, so readers that arrived before it take its outcome.
 *
 * A CHECK constraint cannot be changed in place on SQLite, so oauth_flows is rebuilt under a new
 * name, its rows copied, and renamed back (the same steps on both engines).
 */
export function oauthFlowsMigration(engine: Engine) {
  const bytes: ColumnDataType = engine === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('oauth_flows_next')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('external_user_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('state_digest', 'text', (c) => c.notNull().unique())
        .addColumn('verifier', bytes, (c) => c.notNull())
        .addColumn('redirect_uri', 'text')
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'exchanging', 'completed', 'failed', 'cancelled')`))
        .addColumn('error_code', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('credential_id', 'text')
        .execute();
      await sql`insert into oauth_flows_next select id, server_id, external_user_id, provider, state_digest, verifier,
        redirect_uri, scopes, status, error_code, expires_at, created_at, completed_at, credential_id from oauth_flows`.execute(db);
      await db.schema.dropTable('oauth_flows').execute();
      await db.schema.alterTable('oauth_flows_next').renameTo('oauth_flows').execute();
      await db.schema.createIndex('oauth_flows_member').on('oauth_flows').columns(['server_id', 'external_user_id', 'status']).execute();

      await db.schema.alterTable('credentials').addColumn('refresh_lease_holder', 'text').execute();
      await db.schema.alterTable('credentials').addColumn('refresh_attempted_at', 'text').execute();
    },
  };
}
