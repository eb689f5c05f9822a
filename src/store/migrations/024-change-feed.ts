import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * PostgreSQL's change feed (store/change-feed.ts), which lets each node answer a proxied call's read
 * from memory as SQLite's change mark does:
 *
 * - every commit that changes what that read returns (a member, a credential, a custom provider, the
 *   auth version that the key triggers of 007 bump) notifies `keyward_changes`, by a trigger, in the
 *   change's own transaction, so no write path (API, dashboard, CLI, an operator's SQL) can forget to;
 *   a credential's bookkeeping alone does not (UNWATCHED_CREDENTIAL_COLUMNS below);
 * - `caching_nodes` holds each node that keeps reads: its lease, and the last token of
 *   `change_tokens` it has seen, so that a change that closes a door (a revocation) is acknowledged
 *   only once every node with a live lease has seen it.
 *
 * SQLite has nothing to add: PRAGMA data_version is its feed, and every process reads the same file.
 */
/**
 * A credential's columns whose change alone notifies nothing: what no proxied call acts on, written
 * often. lastUsedAt once a minute per credential in use, the background check's time and outcome, the
 * refresh lease (the lease itself is decided in the database: token-refresh.ts). Any other column
 * notifies, a column added later too. What this migration created is what databases have: a change
 * here needs a new migration.
 */
export const UNWATCHED_CREDENTIAL_COLUMNS = ['last_used_at', 'last_check_at', 'last_check_outcome', 'refresh_lease_until', 'refresh_lease_holder'] as const;

export function changeFeedMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine !== 'postgres') return;
      await sql`create sequence change_tokens`.execute(db);
      await sql`create table caching_nodes (
        node_id text primary key,
        lease_until timestamptz not null,
        seen_token bigint not null
      )`.execute(db);
      await sql`create function keyward_announce_change() returns trigger language plpgsql as $$
        begin
          perform pg_notify('keyward_changes', '');
          return null;
        end $$`.execute(db);
      for (const table of ['audience_members', 'custom_providers', 'auth_version']) {
        await sql`create trigger ${sql.raw(`${table}_announce_change`)} after insert or update or delete or truncate on ${sql.raw(table)}
          for each statement execute function keyward_announce_change()`.execute(db);
      }
      await sql`create trigger credentials_announce_change after insert or delete or truncate on credentials
        for each statement execute function keyward_announce_change()`.execute(db);
      // For each row, where it changed beyond the unwatched columns: a statement trigger would fire on
      // every use's write, emptying every node's memory once a minute per credential in use. Compared
      // as whole rows, not column by column (\`update of …\`): that would name every column, so a later
      // migration could neither change one's type nor add one without the trigger missing it.
      const unwatched = sql.raw(`array[${UNWATCHED_CREDENTIAL_COLUMNS.map((column) => `'${column}'`).join(', ')}]`);
      await sql`create trigger credentials_update_announce_change after update on credentials for each row
        when ((to_jsonb(old) - ${unwatched}) is distinct from (to_jsonb(new) - ${unwatched}))
        execute function keyward_announce_change()`.execute(db);
    },
  };
}
