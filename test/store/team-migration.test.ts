/**
 * Migration 017 (the team, issue 20 item 8) over a database the previous version made, on both
 * engines: an account with its one user, the user's live session and an account key the user made,
 * written as the code before 017 wrote them. After the upgrade the user is the account's `owner`, the
 * session ends exactly when it would have ended before (its old deadline becomes its absolute end),
 * no invitation exists, and the real app on that database lets the owner in: the old session still
 * opens "Servers" until its end, and the owner signs in with the old password and sees everything.
 */
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { addSeconds, iso } from '../../src/primitives/clock.js';
import { sha256Hex } from '../../src/primitives/digest.js';
import { newToken } from '../../src/primitives/random-tokens.js';
import { generateKey, keyDigest, keyHint } from '../../src/services/keys/key-format.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { migrateToLatest, migrateUpTo } from '../../src/store/migrate.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { DashboardClient, visible } from '../helpers/dashboard-session.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';
import { type SecondNode, startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';

/** How long a session lasted before 017: 12 hours from sign-in, however it was used. */
const OLD_SESSION_SECONDS = 12 * 3600;
const PASSWORD = 'correct horse battery staple';

describe.each(ENGINES)('migration 017 (the team) on %s', (engine) => {
  let t: TestApp | undefined;
  let old: TestDatabase | undefined;
  let store: Store | undefined;
  let node: SecondNode | undefined;
  afterEach(async () => {
    await node?.close();
    await store?.close();
    await old?.drop();
    await t?.close();
  });

  it('makes the single user its account’s owner, keeps the session to its old end, and lets the owner in', async () => {
    // The test app only gives its clock and keys here: the database under test is made apart, below.
    t = await startTestApp(engine);
    old = await createTestDatabase(engine);
    store = openStore(parseDatabaseUrl(old.url)!);
    await migrateUpTo(store, '016-credential-usage');

    // Rows as the code before 017 wrote them: sign-up's account and user, sign-in's session, "Generate Key".
    const signedUpAt = addSeconds(t.clock.now(), -2 * 3600);
    const signedInAt = addSeconds(t.clock.now(), -3600);
    const token = newToken();
    const key = generateKey('account');
    const db = store.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    await db
      .insertInto('accounts')
      .values({ id: 'acct_old', name: 'Acme', created_at: iso(signedUpAt), updated_at: iso(signedUpAt) })
      .execute();
    await db
      .insertInto('account_users')
      .values({ id: 'usr_old', account_id: 'acct_old', email: 'owner@acme.example', password_hash: await hashPassword(PASSWORD), created_at: iso(signedUpAt) })
      .execute();
    await db
      .insertInto('dashboard_sessions')
      .values({
        id: 'ses_old',
        token_digest: sha256Hex(token),
        user_id: 'usr_old',
        created_at: iso(signedInAt),
        expires_at: iso(addSeconds(signedInAt, OLD_SESSION_SECONDS)),
      })
      .execute();
    await db
      .insertInto('account_keys')
      .values({
        id: 'key_old',
        account_id: 'acct_old',
        label: 'Billing backend',
        environment: 'production',
        digest: keyDigest(key),
        hint: keyHint(key),
        created_at: iso(signedInAt),
        created_by: 'user:usr_old',
        last_used_at: null,
        expires_at: null,
        revoked_at: null,
        revoked_by: null,
        exposed_origin: null,
        exposed_at: null,
      })
      .execute();

    expect(await migrateToLatest(store)).toContain('017-team');

    expect(await store.db.selectFrom('account_users').select(['id', 'account_id', 'role', 'last_sign_in_at']).execute()).toEqual([
      { id: 'usr_old', account_id: 'acct_old', role: 'owner', last_sign_in_at: null },
    ]);
    expect(await store.db.selectFrom('dashboard_sessions').selectAll().execute()).toEqual([
      {
        id: 'ses_old',
        token_digest: sha256Hex(token),
        user_id: 'usr_old',
        created_at: iso(signedInAt),
        // The old deadline was absolute: it is the session's end, and its idle deadline until a request moves it.
        expires_at: iso(addSeconds(signedInAt, OLD_SESSION_SECONDS)),
        ends_at: iso(addSeconds(signedInAt, OLD_SESSION_SECONDS)),
        last_seen_at: iso(signedInAt),
        user_agent: null,
        address: null,
      },
    ]);
    expect(await store.db.selectFrom('account_keys').select(['id', 'created_by']).execute()).toEqual([{ id: 'key_old', created_by: 'user:usr_old' }]);
    const invitations = await sql<{ count: number | string }>`select count(*) as count from team_invitations`.execute(store.db);
    expect(Number(invitations.rows[0]!.count)).toBe(0);

    // The real app on the upgraded database. startTestApp always makes a new database, so a node is
    // opened on this one the way startSecondNode opens a second machine's: the same buildApp and
    // start-up (migrations, master-key check) as production, given the test app's URL replaced by
    // this database's. No other path starts the real app on a given database without a copy of the
    // test app's wiring.
    node = await startSecondNode({ ...t, database: old });

    // The session signed in before the upgrade still opens the owner's pages, with the owner's forms…
    const before = new DashboardClient(node.app);
    before.cookies.set('keyward_session', token);
    const servers = await before.get('/dashboard/servers');
    expect(servers.statusCode).toBe(200);
    expect(servers.body).toContain('<h1>Servers</h1>');
    expect(servers.body).toContain('<button type="submit">Create server</button>');
    // …until a minute before its old end, and not after it.
    node.clock.advance(OLD_SESSION_SECONDS - 3600 - 60);
    expect((await before.get('/dashboard/servers')).statusCode).toBe(200);
    node.clock.advance(120);
    const ended = await before.get('/dashboard/servers');
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toBe('/dashboard/sign-in');

    // The owner signs in with the password set before the upgrade, and finds their key under their name.
    const owner = new DashboardClient(node.app);
    const signedIn = await owner.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'owner@acme.example', password: PASSWORD });
    expect(signedIn.statusCode, signedIn.body.slice(0, 300)).toBe(303);
    const home = await owner.get(signedIn.headers.location!);
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('<h1>Servers</h1>');
    expect(visible(home.body)).toContain('No servers yet. Create one to get its server API key.');
    const keysPage = await owner.get('/dashboard/developer/api-keys');
    expect(visible(keysPage.body, ' ')).toContain(`Billing backend Production ${keyHint(key)} owner@acme.example`);
    expect(keysPage.body).toContain('<button type="submit">Generate Key</button>');
  });
});
