/**
 * Signing up, in and out of the dashboard: sessions in the database behind an HttpOnly cookie, a new
 * session id at every sign-in (no fixation), CSRF on the anonymous forms too, and the lock-out after
 * repeated failed sign-ins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_SECONDS, MAX_SIGN_IN_ATTEMPTS } from '../../src/services/users/sign-in-attempts.js';
import { csrfOf, DashboardClient, signUpUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';

describe.each(ENGINES)('dashboard sign-in on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  const signIn = async (client: DashboardClient, email: string, password: string) =>
    client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  const sessionRows = () => t.ctx.store.db.selectFrom('dashboard_sessions').selectAll().execute();

  it('shows the sign-in form with the contract words and strict page headers', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('<label for="field-email">Email</label>');
    expect(response.body).toContain('<label for="field-password">Password</label>');
    expect(response.body).toContain('<button type="submit">Sign in</button>');
    expect(response.body).toContain('>Create account</a>');
    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).not.toMatch(/<script>|<style>|\son[a-z]+="/);
  });

  it('signs a new user up into a new account, with the password hashed by scrypt and the session token stored as a digest', async () => {
    const client = await signUpUser(t.app, { email: 'Founder@Acme.example', accountName: 'Acme' });
    const token = client.cookies.get('keyward_session')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const user = await t.ctx.store.db.selectFrom('account_users').selectAll().where('email', '=', 'founder@acme.example').executeTakeFirstOrThrow();
    expect(user.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(JSON.stringify(await sessionRows())).not.toContain(token);
    const home = await client.get('/dashboard/servers');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('founder@acme.example');
    expect(home.body).toContain('Acme');
  });

  it('sets the session cookie HttpOnly, SameSite=Lax, on /dashboard, for the session lifetime', async () => {
    await signUpUser(t.app, { email: 'cookie@acme.example' });
    const client = new DashboardClient(t.app);
    const response = await signIn(client, 'cookie@acme.example', PASSWORD);
    expect(response.statusCode).toBe(303);
    const header = ([] as string[]).concat(response.headers['set-cookie'] as string | string[]).find((c) => c.startsWith('keyward_session='))!;
    expect(header.split('; ').slice(1)).toEqual(['Path=/dashboard', 'HttpOnly', 'SameSite=Lax', 'Max-Age=604800']);
  });

  it('sends a new user from sign-up to sign in, and keeps the first account of a taken email as it was', async () => {
    const client = new DashboardClient(t.app);
    const first = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', { accountName: 'First', email: 'twice@acme.example', password: PASSWORD });
    expect(first.statusCode).toBe(303);
    expect(first.headers.location).toBe('/dashboard/sign-in?notice=signed-up');
    expect(client.cookies.has('keyward_session')).toBe(false);
    const page = await client.get(first.headers.location as string);
    expect(visible(page.body)).toContain('Sign in with the email and password you just entered.');
    const second = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', {
      accountName: 'Other',
      email: 'twice@acme.example',
      password: 'another password',
    });
    expect(second.statusCode).toBe(303);
    expect(second.headers.location).toBe('/dashboard/sign-in?notice=signed-up');
    expect(await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', 'twice@acme.example').execute()).toHaveLength(1);
    expect((await signIn(client, 'twice@acme.example', 'another password')).statusCode).toBe(401);
    expect((await signIn(client, 'twice@acme.example', PASSWORD)).statusCode).toBe(303);
    expect(visible((await client.get('/dashboard/servers')).body)).toContain('First');
  });

  it('refuses a sign-up with the account service’s own message beside the field it names, keeping what was typed but the password', async () => {
    const client = new DashboardClient(t.app);
    const users = () => t.ctx.store.db.selectFrom('account_users').select('id').execute();
    const before = await users();
    const refusals: [Record<string, string>, string, string][] = [
      [{ accountName: '   ', email: 'blank@acme.example', password: PASSWORD }, 'accountName', 'Enter the name of the company or team.'],
      [{ accountName: 'Acme', email: 'not-an-email', password: PASSWORD }, 'email', 'The email address is not valid.'],
      [{ accountName: 'Acme', email: 'short@acme.example', password: 'seven77' }, 'password', 'The password must be 8 to 1024 characters.'],
    ];
    for (const [fields, field, message] of refusals) {
      const refused = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', fields);
      expect(refused.statusCode, field).toBe(422);
      expect(refused.body).toContain(`<p class="error" id="field-${field}-error">${message}</p>`);
      // Only the field the service named is marked.
      expect(refused.body.match(/<p class="error" id="field-/g), field).toHaveLength(1);
      expect(refused.body).toContain(`value="${fields.email}"`);
      expect(refused.body).not.toContain(fields.password);
    }
    expect(await users()).toEqual(before);
  });

  it('answers a wrong password with one message that does not say which part was wrong', async () => {
    await signUpUser(t.app, { email: 'wrong@acme.example' });
    const client = new DashboardClient(t.app);
    const wrong = await signIn(client, 'wrong@acme.example', 'not the password');
    const unknown = await signIn(client, 'nobody@acme.example', 'not the password');
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(response.body).toContain('That email and password do not match an account.');
    }
    expect(wrong.body).toContain('value="wrong@acme.example"');
    expect(client.cookies.has('keyward_session')).toBe(false);
    expect((await client.get('/dashboard/servers')).headers.location).toBe('/dashboard/sign-in');
  });

  it('locks the email out after repeated failures, even for the right password, until the lock ends', async () => {
    await signUpUser(t.app, { email: 'locked@acme.example' });
    const client = new DashboardClient(t.app);
    for (let i = 1; i < MAX_SIGN_IN_ATTEMPTS; i += 1) expect((await signIn(client, 'locked@acme.example', `guess ${i}`)).statusCode).toBe(401);
    // The last attempt of the window is still checked, and says that the next ones will not be.
    const last = await signIn(client, 'locked@acme.example', 'last guess');
    expect(last.statusCode).toBe(401);
    expect(visible(last.body)).toMatch(
      /That email and password do not match an account\. Too many failed sign-ins for this email: try again after \d\d:\d\d UTC\./,
    );
    const locked = await signIn(client, 'locked@acme.example', PASSWORD);
    expect(locked.statusCode).toBe(429);
    expect(visible(locked.body)).toMatch(/Too many failed sign-ins for this email\. Try again after \d\d:\d\d UTC\./);
    t.clock.advance(LOCK_SECONDS + 1);
    expect((await signIn(client, 'locked@acme.example', PASSWORD)).statusCode).toBe(303);
    // A good sign-in clears the count: a whole window of attempts again.
    const other = new DashboardClient(t.app);
    for (let i = 1; i <= MAX_SIGN_IN_ATTEMPTS; i += 1) expect((await signIn(other, 'locked@acme.example', `again ${i}`)).statusCode).toBe(401);
    expect((await signIn(other, 'locked@acme.example', PASSWORD)).statusCode).toBe(429);
  });

  it('gives a new session id at sign-in and ends any session the browser brought (no fixation)', async () => {
    const attacker = await signUpUser(t.app, { email: 'attacker@evil.example' });
    await signUpUser(t.app, { email: 'victim@acme.example' });
    const planted = attacker.cookies.get('keyward_session')!;
    // The victim's browser carries the attacker's session cookie when it posts the sign-in form.
    const victim = new DashboardClient(t.app);
    const form = await victim.get('/dashboard/sign-in');
    victim.cookies.set('keyward_session', planted);
    const signedIn = await victim.post('/dashboard/sign-in', { csrf: csrfOf(form.body), email: 'victim@acme.example', password: PASSWORD });
    expect(signedIn.statusCode).toBe(303);
    const fresh = victim.cookies.get('keyward_session')!;
    expect(fresh).not.toBe(planted);
    expect((await victim.get('/dashboard/servers')).body).toContain('victim@acme.example');
    // The planted session no longer opens anything.
    expect((await attacker.get('/dashboard/servers')).headers.location).toBe('/dashboard/sign-in');
  });

  it('refuses a sign-in or sign-up posted without the form’s CSRF token, creating nothing', async () => {
    await signUpUser(t.app, { email: 'csrf@acme.example' });
    const before = (await sessionRows()).length;
    const client = new DashboardClient(t.app);
    const page = await client.get('/dashboard/sign-in');
    const noToken = await client.post('/dashboard/sign-in', { email: 'csrf@acme.example', password: PASSWORD });
    const wrongToken = await client.post('/dashboard/sign-in', { csrf: `${csrfOf(page.body)}x`, email: 'csrf@acme.example', password: PASSWORD });
    // A cross-site form has the token of no nonce cookie of this browser.
    const otherBrowser = await new DashboardClient(t.app).post('/dashboard/sign-in', {
      csrf: csrfOf(page.body),
      email: 'csrf@acme.example',
      password: PASSWORD,
    });
    const signUp = await new DashboardClient(t.app).post('/dashboard/sign-up', { accountName: 'X', email: 'new@acme.example', password: PASSWORD });
    for (const response of [noToken, wrongToken, otherBrowser, signUp]) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('This form could not be verified.');
    }
    expect((await sessionRows()).length).toBe(before);
    expect(await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', 'new@acme.example').executeTakeFirst()).toBeUndefined();
  });

  it('refuses a signed-in POST without the session’s CSRF token', async () => {
    const client = await signUpUser(t.app, { email: 'signed-in-csrf@acme.example' });
    const response = await client.post('/dashboard/sign-out', {});
    expect(response.statusCode).toBe(403);
    expect((await client.get('/dashboard/servers')).statusCode).toBe(200);
  });

  it('signs out: the session is deleted and its cookie cleared', async () => {
    const client = await signUpUser(t.app, { email: 'bye@acme.example' });
    const token = client.cookies.get('keyward_session')!;
    const response = await client.submit('/dashboard/servers', '/dashboard/sign-out', {});
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/sign-in');
    expect(client.cookies.has('keyward_session')).toBe(false);
    const replay = new DashboardClient(t.app);
    replay.cookies.set('keyward_session', token);
    expect((await replay.get('/dashboard/servers')).headers.location).toBe('/dashboard/sign-in');
  });

  it('ends a session after its lifetime', async () => {
    const client = await signUpUser(t.app, { email: 'expiry@acme.example' });
    t.clock.advance(12 * 3600 + 1);
    expect((await client.get('/dashboard/servers')).headers.location).toBe('/dashboard/sign-in');
  });

  it('sends a visitor without a session to the sign-in page, and shows a page for an unknown path', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/' })).headers.location).toBe('/dashboard');
    expect((await t.app.inject({ method: 'GET', url: '/dashboard' })).headers.location).toBe('/dashboard/sign-in');
    const missing = await t.app.inject({ method: 'GET', url: '/dashboard/no/such/page' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^text\/html/);
    expect(missing.body).toContain('Page not found');
  });
});

describe('dashboard cookies behind https', () => {
  it('marks the session and CSRF cookies Secure when the public URL is https', async () => {
    const t = await startTestApp('sqlite', { publicUrl: 'https://keyward.example' });
    try {
      const client = new DashboardClient(t.app);
      const page = await client.get('/dashboard/sign-up');
      expect(String(page.headers['set-cookie'])).toMatch(/^keyward_dashboard_csrf=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict; Secure$/);
      await client.post('/dashboard/sign-up', { csrf: csrfOf(page.body), accountName: 'Secure', email: 'secure@acme.example', password: PASSWORD });
      const response = await client.post('/dashboard/sign-in', { csrf: csrfOf(page.body), email: 'secure@acme.example', password: PASSWORD });
      expect(String(response.headers['set-cookie'])).toMatch(/^keyward_session=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Lax; Secure; Max-Age=604800$/);
    } finally {
      await t.close();
    }
  });
});
