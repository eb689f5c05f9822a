import type { Kysely } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * A server's branding (CONTRACT 10): the name, accent colour and logo its end users see on the Connect
 * page, the hosted form and the OAuth pages.
 *
 * server_branding: one row per server that has any, beside `servers` rather than in it: the logo is up
 * to 64 KiB, and `servers` rows are read whole on many paths (the guard's lookups, every dashboard
 * page) that have no use for it. `display_name` and `accent_color` (`#rrggbb`, lower case) are null
 * when unset. `logo` holds the checked bytes (PNG or SVG, services/branding/logo-check.ts),
 * `logo_type` their content type, and `logo_version` the first 16 hex of their SHA-256: it is part of
 * the logo's URL, so the URL can be cached for good and a new logo is a new URL. The three are all
 * null or all set.
 */
export function serverBrandingMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('server_branding')
        .addColumn('server_id', 'text', (c) => c.primaryKey().references('servers.id').onDelete('cascade'))
        .addColumn('display_name', 'text')
        .addColumn('accent_color', 'text')
        .addColumn('logo', engine === 'postgres' ? 'bytea' : 'blob')
        .addColumn('logo_type', 'text')
        .addColumn('logo_version', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
