/**
 * A dashboard user made by `account create` without --password cannot sign in, and the CLI says so;
 * `user set-password` (CONTRACT 4) gives them one, read from standard input, under the sign-up's rule,
 * audited as the operator. Real processes on both engines: the CLI, and `serve` whose real sign-in
 * route the user then signs in through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { cliEnv, cliJson, newMasterKey, runCli, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { csrfOf } from '../helpers/dashboard-session.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const SLOW = 180_000;
const PASSWORD = 'correct horse battery staple';

/** A browser's round trip through a dashboard form: GET the page (its CSRF cookie and token), POST the fields. */
async function postForm(base: string, path: string, fields: Record<string, string>, cookie = '') {
  const page = await fetch(`${base}${path}`, { headers: { cookie } });
  const cookies = [cookie, ...page.headers.getSetCookie().map((c) => c.split(';')[0])].filter(Boolean).join('; ');
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrfOf(await page.text()), ...fields }),
  });
  const session = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('keyward_session='));
  return { status: response.status, location: response.headers.get('location'), body: await response.text(), session };
}

describe.each(ENGINES)('user set-password on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  let env: NodeJS.ProcessEnv;
  let serve: ServeProcess;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0', KEYWARD_SIGNUP: 'open' });
    serve = await startServe(env);
    store = openStore(parseDatabaseUrl(database.url)!);
  }, SLOW);
  afterAll(async () => {
    await serve?.stop();
    await store?.close();
    await database?.drop();
  });

  const signIn = (email: string, password: string) => postForm(serve.address, '/dashboard/sign-in', { email, password });

  it('account create without --password says the user cannot sign in yet, on stderr; --json prints only its object', { timeout: SLOW }, async () => {
    const run = await runCli(env, ['account', 'create', '--name', 'Acme', '--email', 'ops@acme.test']);
    expect(run.code, run.stderr).toBe(0);
    const userId = /with user (usr_[0-9a-z]+)\./.exec(run.stdout)?.[1];
    expect(userId, run.stdout).toBeDefined();
    expect(run.stderr).toBe(
      `keyward: user ${userId} has no password and cannot sign in to the dashboard until one is set: keyward user set-password --user ${userId}\n`,
    );
    const json = await cliJson(env, ['account', 'create', '--name', 'Beta', '--email', 'ops@beta.test']);
    expect(Object.keys(json).sort()).toEqual(['accountId', 'userId']);
    // With a password, nothing to say.
    const withPassword = await runCli(env, ['account', 'create', '--name', 'Gamma', '--email', 'ops@gamma.test', '--password', PASSWORD]);
    expect(withPassword).toMatchObject({ code: 0, stderr: '' });
  });

  it('sets the password from standard input (one trailing newline dropped); the user signs in through the real route', { timeout: SLOW }, async () => {
    const { accountId, userId } = (await cliJson(env, ['account', 'create', '--name', 'Delta', '--email', 'ops@delta.test'])) as Record<string, string>;
    expect((await signIn('ops@delta.test', PASSWORD)).status).toBe(401);

    expect(await cliJson(env, ['user', 'set-password', '--user', userId!], `${PASSWORD}\n`)).toEqual({ userId });
    const signedIn = await signIn('ops@delta.test', PASSWORD);
    expect(signedIn.status, signedIn.body).toBe(303);
    expect(signedIn.location).toBe('/dashboard/servers');
    expect(signedIn.session).toBeDefined();
    // Only one newline was dropped: the password is the text before it, not a prefix or a trimmed form.
    expect((await signIn('ops@delta.test', `${PASSWORD}\n`)).status).toBe(401);

    // Audited as the operator, never with the password.
    const events = await store.db
      .selectFrom('audit_events')
      .selectAll()
      .where('account_id', '=', accountId!)
      .where('action', '=', 'user.password_set')
      .execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: 'cli', target_id: userId });
    expect(JSON.parse(events[0]!.detail)).toEqual({ email: 'ops@delta.test' });
    expect(JSON.stringify(events)).not.toContain('horse');

    // A reset ends the sessions opened with the old password.
    const before = await fetch(`${serve.address}/dashboard/servers`, { headers: { cookie: signedIn.session! }, redirect: 'manual' });
    expect(before.status).toBe(200);
    const text = await runCli(env, ['user', 'set-password', '--user', userId!], 'another good password\r\n');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(userId);
    const after = await fetch(`${serve.address}/dashboard/servers`, { headers: { cookie: signedIn.session! }, redirect: 'manual' });
    expect(after.status).toBe(303);
    const again = await signIn('ops@delta.test', 'another good password');
    expect(again.status).toBe(303);
    expect((await signIn('ops@delta.test', PASSWORD)).status).toBe(401);
    // The account's Audit page tells it, by the CLI.
    const audit = await fetch(`${serve.address}/dashboard/audit`, { headers: { cookie: again.session! } });
    expect(await audit.text()).toContain('Set the dashboard password of ops@delta.test');
  });

  it("refuses a password the sign-up refuses, in the sign-up's words, and an unknown user: exit 1, one line", { timeout: SLOW }, async () => {
    const { userId } = (await cliJson(env, ['account', 'create', '--name', 'Eps', '--email', 'ops@eps.test'])) as Record<string, string>;
    const signUp = await postForm(serve.address, '/dashboard/sign-up', { accountName: 'Zeta', email: 'ops@zeta.test', password: 'short' });
    expect(signUp.status).toBe(422);
    const rule = 'the password must be 8 to 1024 characters';
    expect(signUp.body.toLowerCase()).toContain(rule);
    for (const input of ['short\n', '', '\n', 'x'.repeat(1025)]) {
      const run = await runCli(env, ['user', 'set-password', '--user', userId!, '--json'], input);
      expect(run, JSON.stringify(input).slice(0, 20)).toEqual({ code: 1, stdout: '', stderr: `keyward: ${rule}\n` });
    }
    const unknown = await runCli(env, ['user', 'set-password', '--user', 'usr_nosuchuser'], `${PASSWORD}\n`);
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'keyward: no dashboard user usr_nosuchuser\n' });
    const hash = await store.db.selectFrom('account_users').select('password_hash').where('id', '=', userId!).executeTakeFirstOrThrow();
    expect(hash.password_hash).toBeNull();
  });
});
