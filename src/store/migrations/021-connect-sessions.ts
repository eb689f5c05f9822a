import { type Kysely, sql } from 'kysely';

/**
 * Connect sessions (CONTRACT 10): one short-lived link to the Connect page, where an end user connects
 * and disconnects any of the providers it offers, as often as they like until it expires.
 *
 * connect_sessions: only a digest of the link's token is stored, as for hosted forms. `providers` is a
 * JSON array of slugs, or null for every provider enabled on the server when the page is read;
 * `allowed_origins` a JSON array (empty: the page posts its events nowhere). `connected_at` is the
 * time of the session's first connection: null means nobody finished anything through it, which is
 * what an expiry notice (connect.failed, "expired") asks about; `expiry_notified_at` is that notice's
 * guarded mark, and connect_sessions_expiry_due serves its job's one question (the unfinished,
 * unnotified sessions in expiry order), as migration 022's indexes do for flows and forms.
 *
 * oauth_flows gains what ties a flow to the Connect page it was started from: `connect_session_id`,
 * `browser_binding` (SHA-256 of the nonce in the cookie of the browser that started it: the callback
 * of such a flow in another browser is refused and leaves it pending, RFC 6749 §10.12) and
 * `connect_popup` (1 where the page ran in connect.js's popup, so the way back says so). All null for
 * a flow started with POST /v1/oauth/{provider}/start, which works as before.
 */
export function connectSessionsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('connect_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('external_user_id', 'text', (c) => c.notNull())
        .addColumn('token_digest', 'text', (c) => c.notNull().unique())
        .addColumn('providers', 'text')
        .addColumn('redirect_uri', 'text')
        .addColumn('allowed_origins', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('connected_at', 'text')
        .addColumn('expiry_notified_at', 'text')
        .execute();
      await sql`create index connect_sessions_expiry_due on connect_sessions (expires_at, id)
        where connected_at is null and expiry_notified_at is null`.execute(db);
      // A member's sessions, ended when the member is removed (2.7); the server's, when it is deleted.
      await db.schema.createIndex('connect_sessions_member').on('connect_sessions').columns(['server_id', 'external_user_id']).execute();

      await db.schema.alterTable('oauth_flows').addColumn('connect_session_id', 'text').execute();
      await db.schema.alterTable('oauth_flows').addColumn('browser_binding', 'text').execute();
      await db.schema.alterTable('oauth_flows').addColumn('connect_popup', 'integer').execute();
    },
  };
}
