import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * The list's provider filter walks one index in list order (CONTRACT 2.5: a page costs the same at
 * any audience size): each credential carries copies of its member's created_at and external id,
 * which never change for a member, and the index on (server, provider, status, those two) holds a
 * provider's active credentials in the order of the list. It begins with the columns of the index
 * credentials_server_provider, which it replaces. (The prefix filter needs no new index: it reads
 * the unique index on (server_id, external_user_id); see audience-repository.ts.)
 */
export function audienceFiltersMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('credentials').addColumn('member_created_at', 'text').execute();
      // Compared and ordered as audience_members.external_user_id is: by code point on both engines.
      await db.schema
        .alterTable('credentials')
        .addColumn('external_user_id', 'text', (c) => (engine === 'postgres' ? c.modifyEnd(sql`collate "C"`) : c))
        .execute();
      await sql`update credentials set member_created_at = m.created_at, external_user_id = m.external_user_id
        from audience_members m where m.id = credentials.member_id`.execute(db);
      // SQLite cannot add NOT NULL to a column of an existing table; there the repository's insert is what fills them.
      if (engine === 'postgres') {
        await sql`alter table credentials alter column member_created_at set not null, alter column external_user_id set not null`.execute(db);
      }
      await db.schema
        .createIndex('credentials_provider_page')
        .on('credentials')
        .columns(['server_id', 'provider', 'status', 'member_created_at', 'external_user_id'])
        .execute();
      await db.schema.dropIndex('credentials_server_provider').execute();
    },
  };
}
