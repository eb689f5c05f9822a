/**
 * KEYWARD_SIGNUP (CONTRACT 5, issue 8 item 15): who may use the dashboard's "Create account".
 * `first` only while the instance has no account (decided atomically), `open` anyone, `closed`
 * nobody; a refused sign-up says how accounts are made here, and the operator's CLI is never limited.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SignupPolicy } from '../../src/config.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { cliEnv, cliJson } from '../helpers/cli-process.js';
import { csrfOf, DashboardClient, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';
const CREATE_LINK = '<a href="/dashboard/sign-up">Create account</a>';
const OPERATOR = 'npx keyward account create --name "Your company" --email you@company.example --password …';

describe.each(ENGINES)('sign-up policy on %s', (engine) => {
  let t: TestApp;
  afterEach(() => t.close());
  const start = async (signup: SignupPolicy) => {
    t = await startTestApp(engine, { signup });
  };
  const accounts = async () => (await t.ctx.store.db.selectFrom('accounts').select('id').execute()).length;

  /** A browser with the anonymous CSRF token (taken from the sign-in page, which every policy shows). */
  async function browser() {
    const client = new DashboardClient(t.app);
    const signIn = await client.get('/dashboard/sign-in');
    const csrf = csrfOf(signIn.body);
    const signUp = (email: string) => client.post('/dashboard/sign-up', { csrf, accountName: 'Acme', email, password: PASSWORD });
    return { client, signIn, signUp };
  }

  /** Every way a person meets a refused sign-up: no link, and the GET and POST of the page. */
  async function expectRefused() {
    const before = await accounts();
    const { client, signIn, signUp } = await browser();
    expect(signIn.body).not.toContain(CREATE_LINK);
    const page = await client.get('/dashboard/sign-up');
    const posted = await signUp('stranger@elsewhere.example');
    for (const response of [page, posted]) {
      expect(response.statusCode).toBe(403);
      expect(visible(response.body)).toContain('This Keyward does not create accounts from the dashboard.');
      expect(visible(response.body)).toContain(OPERATOR);
      expect(response.body).not.toContain('name="password"');
    }
    expect(await accounts()).toBe(before);
    expect(await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', 'stranger@elsewhere.example').executeTakeFirst()).toBeUndefined();
  }

  it('first: two sign-ups at once on an empty instance make one account; then sign-up is closed', async () => {
    await start('first');
    const { client, signIn, signUp } = await browser();
    expect(signIn.body).toContain(CREATE_LINK);
    expect((await client.get('/dashboard/sign-up')).statusCode).toBe(200);
    const answers = await Promise.all([signUp('one@acme.example'), signUp('two@acme.example')]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 403]);
    expect(await accounts()).toBe(1);
    await expectRefused();
  });

  it('first: an account made by the operator closes sign-up too', async () => {
    await start('first');
    await createAccount(t.ctx, { name: 'Operator made', email: 'ops@acme.example', password: PASSWORD });
    await expectRefused();
  });

  it('open: anyone may create an account, however many exist', async () => {
    await start('open');
    const { signIn, signUp } = await browser();
    expect(signIn.body).toContain(CREATE_LINK);
    const answers = await Promise.all([signUp('one@acme.example'), signUp('two@acme.example')]);
    expect(answers.map((r) => r.statusCode)).toEqual([303, 303]);
    expect(await accounts()).toBe(2);
    expect((await browser()).signIn.body).toContain(CREATE_LINK);
  });

  it('closed: nobody signs up, even on an empty instance; the operator CLI still makes an account that signs in', async () => {
    await start('closed');
    await expectRefused();
    expect(await accounts()).toBe(0);
    const env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64'), KEYWARD_SIGNUP: 'closed' });
    const made = await cliJson(env, ['account', 'create', '--name', 'Acme', '--email', 'ops@acme.example', '--password', PASSWORD]);
    expect(made.accountId).toMatch(/^acct_/);
    const { client } = await browser();
    expect((await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'ops@acme.example', password: PASSWORD })).statusCode).toBe(303);
    expect((await client.get('/dashboard/servers')).statusCode).toBe(200);
  });
});
