import { type ColumnDataType, type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/** The first schema: every table of the data model, with the indexes the hot paths use. */
export function initialMigration(engine: Engine) {
  const bytes: ColumnDataType = engine === 'postgres' ? 'bytea' : 'blob';

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      // The people who sign in to an account's dashboard: renamed account_users by migration 012.
      await db.schema
        .createTable('members')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('servers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('business', 'personal')`))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('servers_account').on('servers').column('account_id').execute();

      await db.schema
        .createTable('server_redirect_uris')
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('uri', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('server_redirect_uris_pk', ['server_id', 'uri'])
        .execute();

      await db.schema
        .createTable('server_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('hint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .execute();
      await db.schema.createIndex('server_keys_server').on('server_keys').column('server_id').execute();

      await db.schema
        .createTable('account_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('production', 'staging', 'development', 'other')`))
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('hint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('revoked_by', 'text')
        .addColumn('exposed_origin', 'text')
        .addColumn('exposed_at', 'text')
        .execute();
      await db.schema.createIndex('account_keys_account').on('account_keys').columns(['account_id', 'created_at']).execute();

      await db.schema
        .createTable('audience_members')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        // Compared and ordered by code point on both engines (SQLite's BINARY; PostgreSQL's "C"),
        // so exact matching and the list's order do not depend on the server's locale.
        .addColumn('external_user_id', 'text', (c) => (engine === 'postgres' ? c.notNull().modifyEnd(sql`collate "C"`) : c.notNull()))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('audience_members_external_id', ['server_id', 'external_user_id'])
        .execute();
      // Keyset pagination walks (created_at, external_user_id) within a server.
      await db.schema.createIndex('audience_members_page').on('audience_members').columns(['server_id', 'created_at', 'external_user_id']).execute();

      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('member_id', 'text', (c) => c.notNull().references('audience_members.id').onDelete('cascade'))
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('oauth2', 'static')`))
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'needs_reauth')`))
        .addColumn('secret', bytes, (c) => c.notNull())
        .addColumn('access_expires_at', 'text')
        .addColumn('scopes', 'text')
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('connected_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('refreshed_at', 'text')
        .addColumn('refresh_lease_until', 'text')
        // At most one live credential per provider and member; revoking deletes the row.
        .addUniqueConstraint('credentials_member_provider', ['member_id', 'provider'])
        .execute();
      await db.schema.createIndex('credentials_server_provider').on('credentials').columns(['server_id', 'provider']).execute();

      await db.schema
        .createTable('server_providers')
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text')
        .addColumn('client_secret', bytes)
        .addColumn('scopes', 'text')
        .addColumn('enabled_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('server_providers_pk', ['server_id', 'provider'])
        .execute();

      await db.schema
        .createTable('custom_providers')
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('oauth2', 'static')`))
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('custom_providers_pk', ['server_id', 'slug'])
        .execute();

      await db.schema
        .createTable('static_form_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('external_user_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('redirect_uri', 'text')
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'completed', 'cancelled')`))
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('credential_id', 'text')
        .execute();
      await db.schema.createIndex('static_form_sessions_member').on('static_form_sessions').columns(['server_id', 'external_user_id', 'status']).execute();

      await db.schema
        .createTable('oauth_flows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('external_user_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('state_digest', 'text', (c) => c.notNull().unique())
        .addColumn('verifier', bytes, (c) => c.notNull())
        .addColumn('redirect_uri', 'text')
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'completed', 'failed', 'cancelled')`))
        .addColumn('error_code', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('credential_id', 'text')
        .execute();
      await db.schema.createIndex('oauth_flows_member').on('oauth_flows').columns(['server_id', 'external_user_id', 'status']).execute();

      await db.schema
        .createTable('idempotency_records')
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer', (c) => c.notNull())
        .addColumn('response', bytes, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_records_pk', ['server_id', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();

      await db.schema
        .createTable('audit_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('server_id', 'text')
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_account').on('audit_events').columns(['account_id', 'created_at']).execute();
    },
  };
}
