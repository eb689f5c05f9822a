/**
 * Migration 008 on a database that already holds credentials: each gets the copies of its member's
 * created_at and external id, so the provider filter finds the credentials stored before it, in order.
 */
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, migrateUpTo } from '../../src/store/migrate.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

describe.each(ENGINES)('migration 008 on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('copies each member’s created_at and external id onto the credentials already stored', async () => {
    database = await createTestDatabase(engine);
    store = openStore(parseDatabaseUrl(database.url)!);
    // The schema as it stood before 008 (a failed migration throws).
    await migrateUpTo(store, '007-auth-version');

    // Rows as the code before 008 wrote them, without the copies.
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const secret = Buffer.from([0]);
    await db.insertInto('accounts').values({ id: 'acct_1', name: 'A', created_at: 't', updated_at: 't' }).execute();
    await db.insertInto('servers').values({ id: 'srv_1', account_id: 'acct_1', name: 'S', mode: 'business', created_at: 't', updated_at: 't' }).execute();
    const members = [
      ['mem_b', 'b|2', '2026-01-01T00:00:02.000Z'],
      ['mem_a', 'a|1', '2026-01-01T00:00:01.000Z'],
      ['mem_c', 'é|3', '2026-01-01T00:00:03.000Z'],
    ];
    for (const [id, externalUserId, createdAt] of members) {
      await db
        .insertInto('audience_members')
        .values({ id, server_id: 'srv_1', external_user_id: externalUserId, created_at: createdAt, updated_at: createdAt })
        .execute();
      await db
        .insertInto('credentials')
        .values({
          id: `cred_${id}`,
          server_id: 'srv_1',
          member_id: id,
          provider: 'openai',
          type: 'static',
          status: 'active',
          secret,
          connected_at: createdAt,
          updated_at: createdAt,
        })
        .execute();
    }

    expect(await migrateToLatest(store)).toContain('008-audience-filters');
    const copies = await store.db.selectFrom('credentials').select(['member_id', 'member_created_at', 'external_user_id']).orderBy('member_id').execute();
    expect(copies).toEqual([
      { member_id: 'mem_a', member_created_at: '2026-01-01T00:00:01.000Z', external_user_id: 'a|1' },
      { member_id: 'mem_b', member_created_at: '2026-01-01T00:00:02.000Z', external_user_id: 'b|2' },
      { member_id: 'mem_c', member_created_at: '2026-01-01T00:00:03.000Z', external_user_id: 'é|3' },
    ]);
    const page = await store.audience.pageOf('srv_1', { provider: 'openai' }, null, 10);
    expect(page.map((r) => r.external_user_id)).toEqual(['a|1', 'b|2', 'é|3']);
    if (engine === 'postgres') {
      // Filled, then required from here on.
      const { rows } = await sql<{ column_name: string; is_nullable: string }>`select column_name, is_nullable from information_schema.columns
        where table_name = 'credentials' and column_name in ('member_created_at', 'external_user_id') order by column_name`.execute(store.db);
      expect(rows).toEqual([
        { column_name: 'external_user_id', is_nullable: 'NO' },
        { column_name: 'member_created_at', is_nullable: 'NO' },
      ]);
    }
  });
});
