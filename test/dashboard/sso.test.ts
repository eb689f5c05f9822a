/**
 * Single sign-on (CONTRACT 9, issue 20 item 4) without a browser, on both engines, for what a real
 * provider will not do on purpose: a scripted issuer (test/helpers/scripted-oidc-issuer.ts) signs its
 * own ID tokens with a key it publishes, and each bad one is made on purpose (another client's
 * audience, expired, signed by another key, another nonce, `email_verified: false`); each is the 400
 * page with one sentence, and nobody is signed in or made. The browser's part (the email form, the
 * sealed cookie, the callback) is played over app.inject with a DashboardClient.
 *
 * Also: the sign-in itself (JIT join as the default role, the same user the next time, the subject
 * recorded, client_secret_basic at the token endpoint), a domain not allowed, an email of another
 * account, "Require SSO" against passwords, the settings' bad inputs (discovery or JWKS over 1 MiB,
 * not https and private addresses under the strict address policy), the client secret never stored in
 * clear and resealed by a master-key rotation.
 */
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/primitives/ids.js';
import { rotateMasterKey } from '../../src/services/sealing/master-key-rotation.js';
import { configureSso, removeSso, setSsoRequired } from '../../src/services/sso/sso-settings.js';
import { invite } from '../../src/services/team/invitations.js';
import { OPERATOR } from '../../src/services/team/team-actor.js';
import { listTeam } from '../../src/services/team/team-users.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { csrfOf, DashboardClient, hiddenFieldsOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { keyIdOf } from '../helpers/master-key.js';
import { type ScriptedOidcIssuer, startScriptedOidcIssuer } from '../helpers/scripted-oidc-issuer.js';
import { leaked, sqliteFilesText, storedRowsText } from '../helpers/secret-scan.js';
import { startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';

const PASSWORD = 'correct horse battery staple';
const SSO = '/dashboard/sso';
const CALLBACK = '/dashboard/sso/callback';
const SETTINGS = '/dashboard/team/sso';

/** The authorization URL the answer to the email form sends the browser to (its Refresh header). */
function authorizationUrlOf(response: LightMyRequestResponse): URL {
  const refresh = String(response.headers.refresh ?? '');
  expect(refresh, response.body.slice(0, 300)).toMatch(/^0;url=/);
  return new URL(refresh.slice('0;url='.length));
}

/** "Sign in with SSO" with `email`, in this browser: the answer to the email form. */
async function startSso(client: DashboardClient, email: string): Promise<LightMyRequestResponse> {
  const form = await client.get(SSO);
  return client.post(SSO, { csrf: csrfOf(form.body), email });
}

function expectFailedPage(response: LightMyRequestResponse, sentence: string): void {
  expect(response.statusCode, response.body.slice(0, 500)).toBe(400);
  expect(String(response.headers['content-type'])).toMatch(/^text\/html/);
  const text = visible(response.body);
  expect(text).toContain('Single sign-on failed');
  expect(text).toContain(sentence);
}

const hasSession = (client: DashboardClient) => client.cookies.has('keyward_session');

describe.each(ENGINES)('single sign-on on %s', (engine) => {
  let t: TestApp;
  let idp: ScriptedOidcIssuer;
  let accountId: string;
  let ownerEmail: string;

  /** Counts of what a refused sign-in must leave as it was. */
  const counts = async () => ({
    users: (await t.ctx.store.db.selectFrom('account_users').select('id').execute()).length,
    sessions: (await t.ctx.store.db.selectFrom('dashboard_sessions').select('id').execute()).length,
  });

  /** The whole sign-in in a new browser: the email form, the provider (scripted) and its redirect back with the state. */
  async function signInThroughSso(email: string, options: { client?: DashboardClient } = {}) {
    const client = options.client ?? new DashboardClient(t.app);
    const started = await startSso(client, email);
    expect(started.statusCode, started.body.slice(0, 300)).toBe(200);
    const url = authorizationUrlOf(started);
    idp.nonce = url.searchParams.get('nonce')!;
    const callback = await client.get(`${CALLBACK}?code=scripted-code&state=${encodeURIComponent(url.searchParams.get('state')!)}`);
    return { client, url, callback };
  }

  const userOf = (email: string) => t.ctx.store.db.selectFrom('account_users').selectAll().where('email', '=', email).executeTakeFirst();

  beforeAll(async () => {
    t = await startTestApp(engine);
    // Its tokens' times by this Keyward's clock, which a test moves.
    idp = await startScriptedOidcIssuer({ now: () => t.clock.now().getTime() });
    ownerEmail = `owner-${engine}@sso.example`;
    ({ accountId } = await createAccount(t.ctx, { name: 'SSO Co', email: ownerEmail, password: PASSWORD }));
    await configureSso(t.ctx, {
      accountId,
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: 'SSO.example, @sso-two.example',
      defaultRole: 'developer',
      actor: OPERATOR,
    });
  });
  afterAll(async () => {
    await idp?.close();
    await t?.close();
  });
  beforeEach(() => {
    idp.idToken = {};
    idp.discovery = {};
    idp.oversized = 'none';
    idp.email = 'ada@sso.example';
    idp.subject = 'subject-ada';
  });

  it('joins a new person as the default role, then signs the same user in again', async () => {
    const first = await signInThroughSso('ada@sso.example');
    expect(first.callback.statusCode, first.callback.body.slice(0, 300)).toBe(303);
    expect(first.callback.headers.location).toBe('/dashboard/servers');
    expect(hasSession(first.client)).toBe(true);
    // The sealed sign-in is spent: the cookie is cleared.
    expect(first.client.cookies.has('keyward_sso')).toBe(false);
    expect((await first.client.get('/dashboard/servers')).statusCode).toBe(200);
    // The authorization request: code flow, PKCE S256, state, nonce, the contract's redirect URI.
    expect(Object.fromEntries(first.url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: idp.clientId,
      redirect_uri: `${t.ctx.publicUrl}/dashboard/sso/callback`,
      scope: 'openid email',
      code_challenge_method: 'S256',
      login_hint: 'ada@sso.example',
    });
    const exchange = idp.tokenRequests.at(-1)!;
    expect(exchange).toMatchObject({ auth: 'client_secret_basic', clientId: idp.clientId, grantType: 'authorization_code' });
    expect(exchange.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);

    const user = await userOf('ada@sso.example');
    expect(user).toMatchObject({ account_id: accountId, role: 'developer', sso_subject: 'subject-ada', password_hash: null });
    const events = await t.ctx.store.db
      .selectFrom('audit_events')
      .select(['action', 'detail'])
      .where('target_id', '=', user!.id)
      .orderBy('created_at')
      .execute();
    expect(events.map((e) => e.action)).toEqual(['user.joined', 'user.signed_in']);
    expect(JSON.parse(events[0]!.detail)).toMatchObject({ email: 'ada@sso.example', role: 'developer', via: 'sso' });
    expect(JSON.parse(events[1]!.detail)).toMatchObject({ via: 'sso' });

    const before = await counts();
    const again = await signInThroughSso('ada@sso.example');
    expect(again.callback.statusCode).toBe(303);
    expect(hasSession(again.client)).toBe(true);
    expect((await counts()).users).toBe(before.users);
    expect((await userOf('ada@sso.example'))!.id).toBe(user!.id);
  });

  it('joins one user when the same new person signs in twice at once', async () => {
    idp.email = 'twice@sso.example';
    idp.subject = 'subject-twice';
    const browsers = await Promise.all(
      ['first', 'second'].map(async (code) => {
        const client = new DashboardClient(t.app);
        const url = authorizationUrlOf(await startSso(client, 'twice@sso.example'));
        idp.nonceOfCode.set(code, url.searchParams.get('nonce')!);
        return { client, code, state: url.searchParams.get('state')! };
      }),
    );
    const answers = await Promise.all(browsers.map(({ client, code, state }) => client.get(`${CALLBACK}?code=${code}&state=${state}`)));
    expect(answers.map((a) => a.statusCode)).toEqual([303, 303]);
    expect(browsers.every(({ client }) => hasSession(client))).toBe(true);
    const users = await t.ctx.store.db.selectFrom('account_users').select('id').where('email', '=', 'twice@sso.example').execute();
    expect(users).toHaveLength(1);
    const joined = await t.ctx.store.db
      .selectFrom('audit_events')
      .select('id')
      .where('target_id', '=', users[0]!.id)
      .where('action', '=', 'user.joined')
      .execute();
    expect(joined).toHaveLength(1);
  });

  it('signs in a user the account already has, recording their subject; never an owner', async () => {
    const existing = `existing-admin-${engine}@sso.example`;
    await t.ctx.store.accounts.addUser({
      id: newId('usr'),
      account_id: accountId,
      email: existing,
      password_hash: await hashPassword(PASSWORD),
      created_at: t.clock.now().toISOString(),
      role: 'admin',
      last_sign_in_at: null,
    });
    idp.email = existing;
    idp.subject = 'subject-existing';
    const { callback } = await signInThroughSso(existing);
    expect(callback.statusCode, callback.body.slice(0, 300)).toBe(303);
    expect(await userOf(existing)).toMatchObject({ role: 'admin', sso_subject: 'subject-existing' });
    // `user list` (and the Team page) say who signs in through SSO.
    const listed = new Map((await listTeam(t.ctx, accountId)).users.map((u) => [u.email, u.sso]));
    expect([listed.get(existing), listed.get(ownerEmail)]).toEqual([true, false]);
    // Another identity at the provider with that email is not that user.
    idp.subject = 'subject-impostor';
    const before = await counts();
    const impostor = await signInThroughSso(existing);
    expectFailedPage(impostor.callback, 'is linked to another identity at your identity provider');
    expect(hasSession(impostor.client)).toBe(false);
    expect(await counts()).toEqual(before);

    // An admin chooses the issuer, and an issuer vouches for any email: an owner signed in through it
    // would be an admin made owner. Owners sign in with their password only.
    idp.email = ownerEmail;
    idp.subject = 'subject-owner';
    const owner = await signInThroughSso(ownerEmail);
    expectFailedPage(owner.callback, 'Owners sign in with their password');
    expect(hasSession(owner.client)).toBe(false);
    expect(await userOf(ownerEmail)).toMatchObject({ role: 'owner', sso_subject: null });
    expect(await counts()).toEqual(before);
  });

  const badTokens: [string, () => void, string][] = [
    ['an ID token for another client (its audience)', () => (idp.idToken = { claims: { aud: 'another-client' } }), 'it was issued for another application'],
    ['an expired ID token', () => (idp.idToken = { claims: { exp: Math.floor(t.clock.now().getTime() / 1000) - 600 } }), 'it has expired'],
    ['an ID token signed by a key the issuer does not publish', () => (idp.idToken = { signWith: 'unpublished' }), 'its signature does not verify'],
    ['an ID token of another sign-in (its nonce)', () => (idp.idToken = { claims: { nonce: 'another-sign-in' } }), 'its nonce does not match'],
    ['an ID token of another issuer', () => (idp.idToken = { claims: { iss: 'https://issuer.elsewhere.example' } }), 'it was issued by another issuer'],
    ['an email that is not verified', () => (idp.idToken = { claims: { email_verified: false } }), 'email_verified is not true'],
    ['an email_verified that is a text, not true', () => (idp.idToken = { claims: { email_verified: 'true' } }), 'email_verified is not true'],
    ['an ID token without an email', () => (idp.idToken = { claims: { email: undefined } }), 'the ID token has no email claim'],
  ];
  for (const [what, script, sentence] of badTokens) {
    it(`refuses ${what} with a clear page, and signs nobody in`, async () => {
      idp.email = 'grace@sso.example';
      script();
      const before = await counts();
      const { client, callback } = await signInThroughSso('grace@sso.example');
      expectFailedPage(callback, sentence);
      expect(hasSession(client)).toBe(false);
      expect(client.cookies.has('keyward_sso')).toBe(false);
      expect(await counts()).toEqual(before);
      expect(await userOf('grace@sso.example')).toBeUndefined();
      // The failed sign-in is recorded in the account, with the sentence shown and no email.
      const last = await t.ctx.store.db
        .selectFrom('audit_events')
        .select(['actor', 'action', 'detail'])
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect({ ...last, detail: JSON.parse(last.detail) }).toEqual({
        actor: 'browser',
        action: 'user.sign_in_failed',
        detail: { address: '127.0.0.1', failure: 'sso_refused', reason: expect.stringContaining(sentence) },
      });
    });
  }

  it('shows a refused single sign-on on the Audit page', async () => {
    idp.email = 'grace@sso.example';
    idp.idToken = { claims: { exp: Math.floor(t.clock.now().getTime() / 1000) - 600 } };
    expectFailedPage((await signInThroughSso('grace@sso.example')).callback, 'it has expired');
    const owner = new DashboardClient(t.app);
    expect((await owner.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: ownerEmail, password: PASSWORD })).statusCode).toBe(303);
    expect(visible((await owner.get('/dashboard/audit')).body, ' ')).toContain(
      'A browser Single sign-on refused a sign-in from 127.0.0.1: The ID token from your identity provider was refused: it has expired. Nobody was signed in.',
    );
  });

  it('refuses a callback without this browser’s sign-in, with another state, and the provider’s error without its words', async () => {
    const started = await startSso(new DashboardClient(t.app), 'ada@sso.example');
    const url = authorizationUrlOf(started);
    idp.nonce = url.searchParams.get('nonce')!;
    const state = url.searchParams.get('state')!;
    const requestsBefore = idp.tokenRequests.length;
    // Another browser: no sealed sign-in.
    expectFailedPage(await new DashboardClient(t.app).get(`${CALLBACK}?code=c&state=${state}`), 'started in another browser');
    // This browser, another state.
    const client = new DashboardClient(t.app);
    const mine = authorizationUrlOf(await startSso(client, 'ada@sso.example'));
    expect(mine.searchParams.get('state')).not.toBe(state);
    expectFailedPage(await client.get(`${CALLBACK}?code=c&state=${state}`), 'does not match the sign-in this browser started');
    // The provider's error: its description is the provider's to word, and is not shown.
    const denied = new DashboardClient(t.app);
    const deniedUrl = authorizationUrlOf(await startSso(denied, 'ada@sso.example'));
    const response = await denied.get(
      `${CALLBACK}?error=access_denied&error_description=${encodeURIComponent('<b>Provider words</b>')}&state=${deniedUrl.searchParams.get('state')}`,
    );
    expectFailedPage(response, 'Your identity provider did not sign you in');
    expect(response.body).not.toContain('Provider words');
    // None of them reached the token endpoint.
    expect(idp.tokenRequests.length).toBe(requestsBefore);
    // A sealed sign-in that is 10 minutes old has expired.
    const late = new DashboardClient(t.app);
    const lateUrl = authorizationUrlOf(await startSso(late, 'ada@sso.example'));
    t.clock.advance(601);
    expectFailedPage(await late.get(`${CALLBACK}?code=c&state=${lateUrl.searchParams.get('state')}`), 'This sign-in has expired');
  });

  it('answers a domain no account allows with one sentence that tells nothing, and refuses one at the callback', async () => {
    const client = new DashboardClient(t.app);
    for (const email of ['someone@not-allowed.example', 'someone@example.invalid']) {
      const response = await startSso(client, email);
      expect(response.statusCode).toBe(422);
      expect(response.headers.refresh).toBeUndefined();
      expect(visible(response.body)).toContain('Single sign-on is not set up for that email’s domain.');
    }
    expect(client.cookies.has('keyward_sso')).toBe(false);
    // The provider vouches for an email of a domain the account does not allow.
    idp.email = 'mallory@not-allowed.example';
    const before = await counts();
    const { callback, client: browser } = await signInThroughSso('ada@sso.example');
    expectFailedPage(callback, 'mallory@not-allowed.example is not of an email domain this account allows for single sign-on');
    expect(hasSession(browser)).toBe(false);
    expect(await counts()).toEqual(before);
  });

  it('refuses an email that signs in to another account', async () => {
    await createAccount(t.ctx, { name: 'Elsewhere', email: 'eve@sso-two.example', password: PASSWORD });
    idp.email = 'eve@sso-two.example';
    idp.subject = 'subject-eve';
    const before = await counts();
    const { callback, client } = await signInThroughSso('eve@sso-two.example');
    expectFailedPage(callback, 'eve@sso-two.example already signs in to another Keyward account');
    expect(hasSession(client)).toBe(false);
    expect(await counts()).toEqual(before);
    expect(await userOf('eve@sso-two.example')).toMatchObject({ sso_subject: null });
    // Recorded as a failed sign-in of this account, without the email: where else it signs in is not this account's to know.
    const recorded = await t.ctx.store.db
      .selectFrom('audit_events')
      .select('detail')
      .where('account_id', '=', accountId)
      .where('action', '=', 'user.sign_in_failed')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(recorded.detail).reason).toBe(
      '(email withheld) already signs in to another Keyward account, so it cannot sign in to this one. Sign in to that account, or ask for another email to be used.',
    );
    const failures = await t.ctx.store.db
      .selectFrom('audit_events')
      .select('detail')
      .where('account_id', '=', accountId)
      .where('action', '=', 'user.sign_in_failed')
      .execute();
    expect(JSON.stringify(failures)).not.toContain('eve@');
  });

  it('counts callbacks from an address as password checks are counted: past the limit, 429 and nothing recorded', async () => {
    const limited = await startTestApp(engine, { authFailureLimitPerMinute: 2 });
    try {
      const account = await createAccount(limited.ctx, { name: 'Limited', email: `owner-limited-${engine}@limited.example`, password: PASSWORD });
      const events = () => limited.ctx.store.db.selectFrom('audit_events').select('id').where('account_id', '=', account.accountId).execute();
      const before = (await events()).length;
      const browser = new DashboardClient(limited.app);
      for (let i = 0; i < 2; i++) expect((await browser.get(`${CALLBACK}?code=x&state=y`)).statusCode).toBe(400);
      const refused = await browser.get(`${CALLBACK}?code=x&state=y`);
      expect(refused.statusCode).toBe(429);
      expect(visible(refused.body)).toContain('Too many attempts from this address. Wait a minute and try again.');
      expect((await events()).length).toBe(before);
    } finally {
      await limited.close();
    }
  });

  it('turns passwords off for everyone but owners with Require SSO, and on again', async () => {
    const signInWithPassword = async (email: string) =>
      new DashboardClient(t.app).submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password: PASSWORD });
    const adminEmail = `admin-${engine}@sso.example`;
    await t.ctx.store.accounts.addUser({
      id: newId('usr'),
      account_id: accountId,
      email: adminEmail,
      password_hash: await hashPassword(PASSWORD),
      created_at: t.clock.now().toISOString(),
      role: 'admin',
      last_sign_in_at: null,
    });
    expect((await signInWithPassword(adminEmail)).statusCode).toBe(303);
    expect(await setSsoRequired(t.ctx, { accountId, required: true, actor: OPERATOR })).toBe(true);
    const refused = await signInWithPassword(adminEmail);
    expect(refused.statusCode).toBe(403);
    expect(visible(refused.body)).toContain('Your account requires single sign-on, so its password is turned off: use “Sign in with SSO” below.');
    expect(refused.body).toContain('href="/dashboard/sso"');
    expect(refused.headers['set-cookie']).toBeUndefined();
    // A wrong password still reads as any wrong password: nothing tells the account requires SSO.
    const wrong = await new DashboardClient(t.app).submit('/dashboard/sign-in', '/dashboard/sign-in', { email: adminEmail, password: 'not the password' });
    expect(wrong.statusCode).toBe(401);
    // The owner keeps their password.
    expect((await signInWithPassword(ownerEmail)).statusCode).toBe(303);
    expect(await setSsoRequired(t.ctx, { accountId, required: false, actor: OPERATOR })).toBe(true);
    expect((await signInWithPassword(adminEmail)).statusCode).toBe(303);
    const changes = await t.ctx.store.db
      .selectFrom('audit_events')
      .select('detail')
      .where('account_id', '=', accountId)
      .where('action', '=', 'account.sso_required_changed')
      .orderBy('created_at')
      .execute();
    expect(changes.map((c) => JSON.parse(c.detail))).toEqual([{ to: true }, { to: false }]);
  });

  it('joins through an invitation with “Join with SSO”, as the invited email only, with the invitation’s role', async () => {
    const invited = await invite(t.ctx, { accountId, email: 'ivy@invited.example', role: 'admin', actor: OPERATOR });
    const token = new URL(invited.url).pathname.split('/').pop()!;
    const openAndStart = async () => {
      const client = new DashboardClient(t.app);
      const page = await client.get(`/dashboard/join/${token}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Join with SSO</button>');
      const started = await client.post('/dashboard/sso/join', hiddenFieldsOf(page.body, '/dashboard/sso/join'));
      const url = authorizationUrlOf(started);
      expect(url.searchParams.get('login_hint')).toBe('ivy@invited.example');
      idp.nonce = url.searchParams.get('nonce')!;
      return { client, state: url.searchParams.get('state')! };
    };
    // The provider vouches for another email: the invitation stays pending.
    idp.email = 'ivan@invited.example';
    const wrong = await openAndStart();
    expectFailedPage(await wrong.client.get(`${CALLBACK}?code=c&state=${wrong.state}`), 'This invitation is for ivy@invited.example');
    expect(
      (await t.ctx.store.db.selectFrom('team_invitations').select('used_at').where('id', '=', invited.invitationId).executeTakeFirstOrThrow()).used_at,
    ).toBeNull();
    // The invited email, of a domain the account does not allow for JIT: the invitation lets it in.
    idp.email = 'ivy@invited.example';
    idp.subject = 'subject-ivy';
    const right = await openAndStart();
    const joined = await right.client.get(`${CALLBACK}?code=c&state=${right.state}`);
    expect(joined.statusCode, joined.body.slice(0, 300)).toBe(303);
    expect(hasSession(right.client)).toBe(true);
    expect(await userOf('ivy@invited.example')).toMatchObject({ account_id: accountId, role: 'admin', sso_subject: 'subject-ivy' });
    expect(
      (await t.ctx.store.db.selectFrom('team_invitations').select('used_at').where('id', '=', invited.invitationId).executeTakeFirstOrThrow()).used_at,
    ).not.toBeNull();
    // Used: the link's page no longer opens, and the SSO form refuses it.
    expect((await new DashboardClient(t.app).get(`/dashboard/join/${token}`)).statusCode).toBe(410);
    // An account without single sign-on: its invitations offer a password only.
    const other = await createAccount(t.ctx, { name: 'No SSO', email: `nosso-${engine}@nosso.example`, password: PASSWORD });
    const plain = await invite(t.ctx, { accountId: other.accountId, email: 'pat@nosso.example', role: 'viewer', actor: OPERATOR });
    expect((await new DashboardClient(t.app).get(new URL(plain.url).pathname)).body).not.toContain('Join with SSO');
  });

  it('uses client_secret_post where discovery offers only that', async () => {
    idp.discovery = { token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'] };
    idp.email = 'post@sso.example';
    idp.subject = 'subject-post';
    const { callback } = await signInThroughSso('post@sso.example');
    expect(callback.statusCode, callback.body.slice(0, 300)).toBe(303);
    expect(idp.tokenRequests.at(-1)).toMatchObject({ auth: 'client_secret_post', clientId: idp.clientId });
  });

  it('refuses, at sign-in, a JWKS that grew past 1 MiB', async () => {
    idp.email = 'heidi@sso.example';
    idp.oversized = 'jwks';
    const before = await counts();
    const { callback, client } = await signInThroughSso('heidi@sso.example');
    expectFailedPage(callback, 'its JWKS is over 1 MiB');
    expect(hasSession(client)).toBe(false);
    expect(await counts()).toEqual(before);
  });

  describe('the settings', () => {
    let admin: DashboardClient;
    let adminAccount: string;
    beforeAll(async () => {
      const made = await newSignedInUser(t.app, t.ctx.store.db, 'Settings');
      admin = made.client;
      adminAccount = made.accountId;
    });

    /** Posts the settings form as the page has it, with `fields` over good values. */
    async function save(fields: Record<string, string>) {
      return admin.submit(SETTINGS, SETTINGS, {
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: 'settings.example',
        defaultRole: 'viewer',
        ...fields,
      });
    }
    const stored = () => t.ctx.store.db.selectFrom('account_sso').selectAll().where('account_id', '=', adminAccount).executeTakeFirst();

    it('refuses a discovery document or a JWKS over 1 MiB, an issuer that is another, and a domain of another account; nothing stored', async () => {
      const refusals: [() => void, Record<string, string>, string][] = [
        [() => (idp.oversized = 'discovery'), {}, 'its discovery document is over 1 MiB, more than Keyward reads'],
        [() => (idp.oversized = 'jwks'), {}, 'its JWKS is over 1 MiB, more than Keyward reads'],
        [() => (idp.discovery = { issuer: 'https://someone.else.example' }), {}, 'its discovery document names another issuer'],
        [() => (idp.discovery = { jwks_uri: undefined }), {}, 'its discovery document names no JWKS (jwks_uri)'],
        [
          () => (idp.discovery = { token_endpoint_auth_methods_supported: ['private_key_jwt'] }),
          {},
          'takes neither client_secret_basic nor client_secret_post',
        ],
        [() => undefined, { issuer: `${idp.issuer}/nowhere` }, 'its discovery document answered HTTP 404'],
        [
          () => undefined,
          { allowedDomains: 'settings.example, sso.example' },
          'The domain sso.example is allowed for single sign-on by another account on this Keyward already.',
        ],
        [() => undefined, { allowedDomains: 'not a domain' }, 'Enter email domains such as example.com: “not” is not one.'],
        [() => undefined, { clientSecret: '' }, 'Enter the client secret your identity provider gave Keyward'],
      ];
      for (const [script, fields, message] of refusals) {
        idp.discovery = {};
        idp.oversized = 'none';
        script();
        const response = await save(fields);
        expect(response.statusCode, message).toBe(422);
        expect(visible(response.body), message).toContain(message);
        expect(response.body).not.toContain(idp.clientSecret);
        expect(await stored()).toBeUndefined();
      }
      const audit = await t.ctx.store.db
        .selectFrom('audit_events')
        .select('id')
        .where('account_id', '=', adminAccount)
        .where('action', '=', 'sso.configured')
        .execute();
      expect(audit).toEqual([]);
    });

    it('saves, keeps the secret sealed and never shown, keeps it when left empty, and removes', async () => {
      idp.discovery = {};
      idp.oversized = 'none';
      const saved = await save({});
      expect(saved.statusCode, saved.body.slice(0, 500)).toBe(303);
      const page = await admin.get(SETTINGS);
      expect(page.body).toContain(`value="${t.ctx.publicUrl}/dashboard/sso/callback"`);
      expect(page.body).not.toContain(idp.clientSecret);
      const row = await stored();
      expect(row).toMatchObject({ issuer: idp.issuer, client_id: idp.clientId, allowed_domains: '["settings.example"]', default_role: 'viewer' });
      // Saved again with the secret left empty: the stored one stays.
      expect((await save({ clientSecret: '', defaultRole: 'admin' })).statusCode).toBe(303);
      const kept = await stored();
      expect(Buffer.from(kept!.client_secret).equals(Buffer.from(row!.client_secret))).toBe(true);
      expect(kept!.default_role).toBe('admin');
      // Never in clear: not in a row, not in the SQLite file, not in a log line.
      expect(leaked(await storedRowsText(t.ctx), [idp.clientSecret])).toEqual([]);
      if (t.database.file) for (const text of sqliteFilesText(t.database.file)) expect(leaked(text, [idp.clientSecret])).toEqual([]);
      expect(leaked(t.logs.join('\n'), [idp.clientSecret])).toEqual([]);

      expect(await setSsoRequired(t.ctx, { accountId: adminAccount, required: true, actor: OPERATOR })).toBe(true);
      const confirm = await admin.get(`${SETTINGS}/remove`);
      expect(confirm.statusCode).toBe(200);
      expect((await admin.submit(`${SETTINGS}/remove`, `${SETTINGS}/remove`, {})).statusCode).toBe(303);
      expect(await stored()).toBeUndefined();
      expect(await t.ctx.store.sso.required(adminAccount)).toBe(false);
      const actions = await t.ctx.store.db
        .selectFrom('audit_events')
        .select(['action', 'detail'])
        .where('account_id', '=', adminAccount)
        .where('action', 'in', ['sso.configured', 'sso.removed'])
        .orderBy('created_at')
        .execute();
      expect(actions.map((a) => a.action)).toEqual(['sso.configured', 'sso.configured', 'sso.removed']);
      expect(JSON.parse(actions[2]!.detail)).toEqual({ issuer: idp.issuer, requireSsoTurnedOff: true });
      expect(actions.map((a) => a.detail).join()).not.toContain(idp.clientSecret);
      expect(await removeSso(t.ctx, { accountId: adminAccount, actor: OPERATOR })).toBe(false);
    });
  });

  it('reseals the client secret in a master-key rotation, and signs in with it on the new key', async () => {
    const newKey = randomBytes(32);
    const node = await startSecondNode(t, { masterKey: newKey, oldMasterKeys: [t.masterKey] });
    try {
      const prefix = async () =>
        Buffer.from(
          (await t.ctx.store.db.selectFrom('account_sso').select('client_secret').where('account_id', '=', accountId).executeTakeFirstOrThrow()).client_secret,
        )
          .subarray(0, 9)
          .toString('hex');
      expect(await prefix()).toBe(`02${keyIdOf(t.masterKey.toString('base64'))}`);
      const result = await rotateMasterKey(node.ctx);
      expect(result.remaining).toBe(0);
      expect(await prefix()).toBe(`02${keyIdOf(newKey.toString('base64'))}`);
      // The new node opens the resealed secret: the scripted token endpoint checks it.
      idp.email = 'rotated@sso.example';
      idp.subject = 'subject-rotated';
      const client = new DashboardClient(node.app);
      const started = await startSso(client, 'rotated@sso.example');
      const url = authorizationUrlOf(started);
      idp.nonce = url.searchParams.get('nonce')!;
      const callback = await client.get(`${CALLBACK}?code=c&state=${url.searchParams.get('state')}`);
      expect(callback.statusCode, callback.body.slice(0, 300)).toBe(303);
      expect(idp.tokenRequests.at(-1)).toMatchObject({ auth: 'client_secret_basic', clientId: idp.clientId });
    } finally {
      await node.close();
    }
  });
});

describe.each(ENGINES)('single sign-on settings under the strict address policy on %s', (engine) => {
  let t: TestApp;
  let idp: ScriptedOidcIssuer;
  let admin: DashboardClient;
  let accountId: string;
  beforeAll(async () => {
    // KEYWARD_ALLOW_PRIVATE_URLS=false, and a name that resolves to this machine.
    t = await startTestApp(engine, { allowPrivateUrls: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    idp = await startScriptedOidcIssuer();
    ({ client: admin, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Strict'));
  });
  afterAll(async () => {
    await idp?.close();
    await t?.close();
  });

  it('refuses an issuer that is not https, or at a private address, and asks it nothing', async () => {
    const port = new URL(idp.issuer).port;
    const refusals: [string, string][] = [
      [idp.issuer, 'The issuer URL must be https; set KEYWARD_ALLOW_PRIVATE_URLS=true only for development'],
      [`https://127.0.0.1:${port}`, 'The issuer URL points at a loopback address (127.0.0.1)'],
      [`https://10.0.0.7`, 'The issuer URL points at a private address (10.0.0.7)'],
      [`https://[::1]:${port}`, 'The issuer URL points at a loopback address (::1)'],
      [`https://localhost:${port}`, 'The issuer URL points at this machine (localhost)'],
      [
        `https://idp.internal.example:${port}`,
        'its discovery endpoint is at an address Keyward may not call (the endpoint resolves to an address that is not public)',
      ],
      ['ftp://idp.example', 'The issuer URL must be https'],
    ];
    for (const [issuer, message] of refusals) {
      const response = await admin.submit(SETTINGS, SETTINGS, {
        issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: `strict-${engine}.example`,
        defaultRole: 'viewer',
      });
      expect(response.statusCode, issuer).toBe(422);
      expect(visible(response.body), issuer).toContain(message);
      expect(response.body).toMatch(/id="field-issuer-error"/);
    }
    expect(await t.ctx.store.db.selectFrom('account_sso').select('account_id').where('account_id', '=', accountId).execute()).toEqual([]);
    expect(idp.paths).toEqual([]);
  });
});
