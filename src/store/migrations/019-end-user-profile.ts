import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * A member's profile (CONTRACT 10): a display name, an email and up to ten `key: value` tags, set by
 * PATCH /v1/end-users/{id} or a connect session's `endUser` (services/audience/end-user-profile.ts).
 *
 * audience_members.display_name, email: null where unset. audience_members.tags: the member's tags as
 * a JSON object with its keys sorted, null where it has none: what the list, the read, the dashboard
 * and webhook bodies show, read with the member's row and no statement of its own.
 *
 * audience_member_tags: the same tags, one row each, for the list's `tag=key:value` filter, written by
 * the same repository call in the same transaction as the JSON copy (audience-repository.ts). Like the
 * provider filter's credentials (migration 008), each row carries copies of its member's created_at
 * and external id, which never change for a member, so that the index on (server, key, value, those
 * two) holds one tag's members in the list's order: a page of one tag is a walk from the cursor that
 * stops at the page's end, and a second tag or a provider is checked by one lookup of the same index
 * (or of credentials_provider_page) per entry, whatever the audience's size (audience-page-queries.ts).
 * The primary key (member, key) serves the member's own rewrites. Keys, values and ids compare by code
 * point on both engines, as audience_members.external_user_id does.
 */
export function endUserProfileMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const column of ['display_name', 'email', 'tags']) {
        await db.schema.alterTable('audience_members').addColumn(column, 'text').execute();
      }
      const exact = engine === 'postgres' ? sql`collate "C"` : null;
      await db.schema
        .createTable('audience_member_tags')
        .addColumn('member_id', 'text', (c) => c.notNull().references('audience_members.id').onDelete('cascade'))
        .addColumn('server_id', 'text', (c) => c.notNull())
        .addColumn('tag_key', 'text', (c) => (exact ? c.notNull().modifyEnd(exact) : c.notNull()))
        .addColumn('tag_value', 'text', (c) => (exact ? c.notNull().modifyEnd(exact) : c.notNull()))
        .addColumn('member_created_at', 'text', (c) => c.notNull())
        .addColumn('external_user_id', 'text', (c) => (exact ? c.notNull().modifyEnd(exact) : c.notNull()))
        .addPrimaryKeyConstraint('audience_member_tags_pk', ['member_id', 'tag_key'])
        .execute();
      await db.schema
        .createIndex('audience_member_tags_page')
        .on('audience_member_tags')
        .columns(['server_id', 'tag_key', 'tag_value', 'member_created_at', 'external_user_id'])
        .execute();
    },
  };
}
