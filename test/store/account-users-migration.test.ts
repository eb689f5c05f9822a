/**
 * Migration 012 on a database that already holds a dashboard user: the table, the session's column
 * and the stored actors take the user's name, the rows and their keys stay, and no index or
 * constraint of the user's tables still spells "member".
 */
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, migrateUpTo } from '../../src/store/migrate.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

describe.each(ENGINES)('migration 012 on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  afterEach(async () => {
    await store.close();
    await database.drop();
  });

  it('renames members to account_users and member actors to user actors, keeping every row', async () => {
    database = await createTestDatabase(engine);
    store = openStore(parseDatabaseUrl(database.url)!);
    await migrateUpTo(store, '011-background-refresh');

    // Rows as the code before 012 wrote them.
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db.insertInto('accounts').values({ id: 'acct_1', name: 'A', created_at: 't', updated_at: 't' }).execute();
    await db.insertInto('members').values({ id: 'usr_1', account_id: 'acct_1', email: 'a@acme.example', password_hash: null, created_at: 't' }).execute();
    await db.insertInto('dashboard_sessions').values({ id: 'ses_1', token_digest: 'd1', member_id: 'usr_1', created_at: 't', expires_at: 'u' }).execute();
    const audit = (id: string, actor: string) => ({
      id,
      account_id: 'acct_1',
      server_id: null,
      actor,
      action: 'a',
      target_id: 'x',
      detail: '{}',
      created_at: 't',
    });
    await db
      .insertInto('audit_events')
      .values([audit('evt_1', 'member:usr_1'), audit('evt_2', 'cli'), audit('evt_3', 'end_user:member:x'), audit('evt_4', 'MEMBER:usr_1')])
      .execute();
    const key = (id: string, digest: string, createdBy: string, revokedBy: string | null) => ({
      id,
      account_id: 'acct_1',
      label: 'L',
      environment: 'production',
      digest,
      hint: 'h',
      created_at: 't',
      created_by: createdBy,
      revoked_at: revokedBy ? 't' : null,
      revoked_by: revokedBy,
    });
    await db
      .insertInto('account_keys')
      .values([key('key_1', 'k1', 'member:usr_1', 'member:usr_1'), key('key_2', 'k2', 'cli', null), key('key_3', 'k3', 'api:key_1', 'cli')])
      .execute();

    expect(await migrateToLatest(store)).toContain('012-account-users');

    // 017 (the team) makes the account's one user its owner; 018 adds the SSO subject.
    expect(await store.db.selectFrom('account_users').selectAll().execute()).toEqual([
      {
        id: 'usr_1',
        account_id: 'acct_1',
        email: 'a@acme.example',
        password_hash: null,
        created_at: 't',
        role: 'owner',
        last_sign_in_at: null,
        sso_subject: null,
      },
    ]);
    expect(await store.db.selectFrom('dashboard_sessions').select(['id', 'user_id']).execute()).toEqual([{ id: 'ses_1', user_id: 'usr_1' }]);
    expect(await store.db.selectFrom('audit_events').select(['id', 'actor']).orderBy('id').execute()).toEqual([
      { id: 'evt_1', actor: 'user:usr_1' },
      { id: 'evt_2', actor: 'cli' },
      { id: 'evt_3', actor: 'end_user:member:x' },
      { id: 'evt_4', actor: 'MEMBER:usr_1' },
    ]);
    expect(await store.db.selectFrom('account_keys').select(['id', 'created_by', 'revoked_by']).orderBy('id').execute()).toEqual([
      { id: 'key_1', created_by: 'user:usr_1', revoked_by: 'user:usr_1' },
      { id: 'key_2', created_by: 'cli', revoked_by: null },
      { id: 'key_3', created_by: 'api:key_1', revoked_by: 'cli' },
    ]);

    // The keys still hold: a unique email, a session of no user refused, a user's sessions deleted with it.
    const user = {
      id: 'usr_2',
      account_id: 'acct_1',
      email: 'a@acme.example',
      password_hash: null,
      created_at: 't',
      role: 'viewer' as const,
      last_sign_in_at: null,
    };
    await expect(store.db.insertInto('account_users').values(user).execute()).rejects.toThrow();
    await expect(
      store.db
        .insertInto('dashboard_sessions')
        .values({
          id: 'ses_2',
          token_digest: 'd2',
          user_id: 'usr_9',
          created_at: 't',
          expires_at: 'u',
          ends_at: 'u',
          last_seen_at: 't',
          user_agent: null,
          address: null,
        })
        .execute(),
    ).rejects.toThrow();
    await store.db.deleteFrom('account_users').where('id', '=', 'usr_1').execute();
    expect(await store.db.selectFrom('dashboard_sessions').select('id').execute()).toEqual([]);

    // Nothing of the users' tables is still named after members; the sessions' index is on user_id.
    const names =
      engine === 'postgres'
        ? (
            await sql<{ name: string; definition: string }>`
            select indexname as name, indexdef as definition from pg_indexes where tablename in ('account_users', 'dashboard_sessions')
            union all select conname, pg_get_constraintdef(oid) from pg_constraint
            where conrelid in ('account_users'::regclass, 'dashboard_sessions'::regclass)`.execute(store.db)
          ).rows
        : (
            await sql<{ name: string; definition: string | null }>`
            select name, sql as definition from sqlite_master where tbl_name in ('account_users', 'dashboard_sessions')`.execute(store.db)
          ).rows;
    expect(names.filter((n) => /member/i.test(`${n.name} ${n.definition ?? ''}`))).toEqual([]);
    expect(names.some((n) => n.name === 'dashboard_sessions_user' && /\(\s*"?user_id"?\s*\)/.test(n.definition ?? ''))).toBe(true);
  });
});
