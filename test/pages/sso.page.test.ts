/**
 * Single sign-on end to end in a real browser (CONTRACT 9, issue 20 item 4), against a real OpenID
 * Connect provider (oidc-provider, test/helpers/sso-identity-provider.ts) on 127.0.0.1, which
 * KEYWARD_ALLOW_PRIVATE_URLS allows (the test app's default): an admin connects the provider on Team →
 * "Single sign-on"; a new person of the allowed domain uses "Sign in with SSO", signs in at the
 * provider and lands in the dashboard, joined as the default role; the same person signs in again as
 * the same user; the provider's token response carrying a forged, an expired or another client's ID
 * token (spoiled on its way out, the provider itself unchanged) is refused with Keyward's 400 page,
 * and leaves no session and no user, and one audit event of the failed sign-in; an email of a domain no account allows is
 * refused; "Require SSO" turns the password off for a non-owner and not for an owner. Every control
 * is found by its visible name, and no page reports a CSP violation. Screenshots go to test-output/screenshots (not committed).
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/dashboard/auth-routes.js';
import { newId } from '../../src/primitives/ids.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { OTHER_CLIENT_ID, type SpoiledIdToken, type SsoIdentityProvider, startSsoIdentityProvider } from '../helpers/sso-identity-provider.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SCREENSHOTS = 'test-output/screenshots';
const PASSWORD = 'correct horse battery staple';
const OWNER = 'owner@acme-sso.example';
const ADMIN = 'admin@acme-sso.example';
const NEWCOMER = 'new.person@acme-sso.example';

describe.skipIf(!chromiumAvailable())('single sign-on in Chromium', () => {
  let t: TestApp;
  let base: string;
  let idp: SsoIdentityProvider;
  let browser: Browser;
  let accountId: string;
  /** Console errors of every page: a CSP violation shows up here. */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.ctx.publicUrl = base;
    idp = await startSsoIdentityProvider({ redirectUri: `${base}/dashboard/sso/callback` });
    ({ accountId } = await createAccount(t.ctx, { name: 'Acme SSO', email: OWNER, password: PASSWORD }));
    await t.ctx.store.accounts.addUser({
      id: newId('usr'),
      account_id: accountId,
      email: ADMIN,
      password_hash: await hashPassword(PASSWORD),
      created_at: new Date().toISOString(),
      role: 'admin',
      last_sign_in_at: null,
    });
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await t?.close();
  });

  /** A fresh browser (no cookies) on the sign-in page. */
  async function freshPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    await page.goto(`${base}/dashboard/sign-in`);
    return page;
  }

  const pathOf = (page: Page) => new URL(page.url()).pathname;

  async function signInWithPassword(page: Page, email: string) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** "Sign in with SSO" from the sign-in page, the email, and the provider's own sign-in. */
  async function signInWithSso(page: Page, email: string) {
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await expect.poll(() => pathOf(page)).toBe('/dashboard/sso');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  async function finishAtProvider(page: Page, email: string) {
    await page.getByRole('heading', { name: 'Sign in to the identity provider' }).waitFor();
    expect(page.url().startsWith(idp.issuer)).toBe(true);
    // The email typed at Keyward came along as the login hint.
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const userRow = (email: string) => t.ctx.store.db.selectFrom('account_users').selectAll().where('email', '=', email).executeTakeFirst();

  /** What a refused sign-in must leave as it was (the account's users, every session) and what it adds to (the account's audit events). */
  const traces = async () => ({
    users: (await t.ctx.store.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).execute()).map((row) => row.id),
    sessions: (await t.ctx.store.db.selectFrom('dashboard_sessions').select('id').execute()).length,
    audit: (await t.ctx.store.db.selectFrom('audit_events').select(['id', 'action']).where('account_id', '=', accountId).orderBy('id').execute()).map(
      (event) => `${event.id} ${event.action}`,
    ),
  });

  it('lets an admin connect the provider on Team → Single sign-on', async () => {
    const page = await freshPage();
    await signInWithPassword(page, ADMIN);
    await expect.poll(() => pathOf(page)).toBe('/dashboard/servers');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
    const link = page.getByRole('link', { name: 'Single sign-on' });
    // The Team page's link (team-views.ts); the page's own address where it has none yet.
    if ((await link.count()) > 0) await link.first().click();
    else await page.goto(`${base}/dashboard/team/sso`);
    await page.getByRole('heading', { name: 'Single sign-on', level: 1 }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Redirect URI' }).inputValue()).toBe(`${base}/dashboard/sso/callback`);
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client ID').fill(idp.clientId);
    await page.getByLabel('Client secret').fill(idp.clientSecret);
    await page.getByLabel('Allowed email domains').fill('acme-sso.example');
    await page.getByLabel('Default role').selectOption({ label: 'Developer' });
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(async () => page.getByRole('status').textContent()).toContain('Single sign-on saved.');
    // The secret is never shown back.
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    expect(await page.content()).not.toContain(idp.clientSecret);
    await page.screenshot({ path: `${SCREENSHOTS}/sso-settings.png`, fullPage: true });
    await page.context().close();
  });

  it('signs a new person in with SSO, joined as the default role, and the same user the next time', async () => {
    const page = await freshPage();
    await signInWithSso(page, NEWCOMER);
    await finishAtProvider(page, NEWCOMER);
    await expect.poll(() => pathOf(page)).toBe('/dashboard/servers');
    expect(await page.locator('.who').textContent()).toContain(NEWCOMER);
    const joined = await userRow(NEWCOMER);
    expect(joined).toMatchObject({ account_id: accountId, role: 'developer', sso_subject: idp.subjectOf(NEWCOMER), password_hash: null });
    await page.screenshot({ path: `${SCREENSHOTS}/sso-signed-in.png`, fullPage: true });
    await page.context().close();

    const users = (await t.ctx.store.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).execute()).length;
    const again = await freshPage();
    await signInWithSso(again, NEWCOMER);
    await finishAtProvider(again, NEWCOMER);
    await expect.poll(() => pathOf(again)).toBe('/dashboard/servers');
    expect((await userRow(NEWCOMER))!.id).toBe(joined!.id);
    expect((await t.ctx.store.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).execute()).length).toBe(users);
    await again.context().close();
  });

  const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

  /** Each bad ID token, how the provider's answer was spoiled, and Keyward's whole sentence for it (services/sso/sso-provider.ts). */
  const badIdTokens: {
    how: SpoiledIdToken;
    what: string;
    signedByProvider: boolean;
    spoiledAs: (claims: Record<string, unknown>) => boolean;
    refusal: string;
  }[] = [
    {
      how: 'forged',
      what: 'a forged ID token (its payload names another person under the provider’s signature)',
      signedByProvider: false,
      spoiledAs: (claims) => claims.email === 'forged.victim@acme-sso.example',
      refusal: "The ID token from your identity provider was refused: its signature does not verify with the provider's published keys. Nobody was signed in.",
    },
    {
      how: 'expired',
      what: 'an expired ID token the provider signed',
      signedByProvider: true,
      // An hour past: well beyond the clock tolerance of the library (30 s).
      spoiledAs: (claims) => (claims.exp as number) < Date.now() / 1000 - 3000,
      refusal: 'The ID token from your identity provider was refused: it has expired. Nobody was signed in.',
    },
    {
      how: 'wrongAudience',
      what: 'an ID token the provider signed for another client',
      signedByProvider: true,
      spoiledAs: (claims) => claims.aud === OTHER_CLIENT_ID,
      refusal:
        'The ID token from your identity provider was refused: it was issued for another application (its audience is not this client id). Nobody was signed in.',
    },
  ];
  for (const bad of badIdTokens) {
    it(`refuses ${bad.what}: the 400 page, no session, nobody joined, the failed sign-in recorded`, async () => {
      // A person nobody has seen: without the spoiled token this sign-in would join them (the test above).
      const email = `refused.${bad.how.toLowerCase()}@acme-sso.example`;
      const forgedEmail = 'forged.victim@acme-sso.example';
      expect(await userRow(email)).toBeUndefined();
      const before = await traces();

      const page = await freshPage();
      await signInWithSso(page, email);
      idp.spoilNextIdToken(bad.how, { forgedEmail });
      const callback = page.waitForResponse((response) => response.url().startsWith(`${base}/dashboard/sso/callback`));
      await finishAtProvider(page, email);
      expect((await callback).status()).toBe(400);
      await page.getByRole('heading', { name: 'Single sign-on failed', level: 1 }).waitFor();
      expect(pathOf(page)).toBe('/dashboard/sso/callback');
      expect(await page.getByText(bad.refusal, { exact: true }).count()).toBe(1);
      await page.screenshot({ path: `${SCREENSHOTS}/sso-refused-${bad.how}.png`, fullPage: true });

      // The provider's token response did carry the bad token, this sign-in's, bad only as meant.
      const { issued, sent } = idp.lastIdToken!;
      expect(claimsOf(issued)).toMatchObject({ email, sub: idp.subjectOf(email), aud: idp.clientId });
      expect(await idp.verifiesWithPublishedKeys(issued)).toBe(true);
      expect(bad.spoiledAs(claimsOf(sent))).toBe(true);
      expect(await idp.verifiesWithPublishedKeys(sent)).toBe(bad.signedByProvider);

      // No session in this browser, and the dashboard sends it to sign in.
      expect((await page.context().cookies()).map((cookie) => cookie.name)).not.toContain(SESSION_COOKIE);
      await page.goto(`${base}/dashboard/servers`);
      expect(pathOf(page)).toBe('/dashboard/sign-in');
      // Nobody joined (neither the person nor whom a forged token names), no session anywhere, and one
      // audit event: the failed sign-in, with the sentence shown and no email (services/sso/sso-login.ts).
      expect(await userRow(email)).toBeUndefined();
      expect(await userRow(forgedEmail)).toBeUndefined();
      const after = await traces();
      expect({ ...after, audit: before.audit }).toEqual(before);
      const recorded = await t.ctx.store.db
        .selectFrom('audit_events')
        .select(['actor', 'action', 'detail'])
        .where('account_id', '=', accountId)
        .where('id', 'not in', before.audit.length ? before.audit.map((line) => line.split(' ')[0]!) : [''])
        .execute();
      expect(recorded.map((event) => ({ ...event, detail: JSON.parse(event.detail) }))).toEqual([
        { actor: 'browser', action: 'user.sign_in_failed', detail: { address: '127.0.0.1', failure: 'sso_refused', reason: bad.refusal } },
      ]);
      await page.context().close();
    });
  }

  it('refuses an email of a domain no account allows, and sends it nowhere', async () => {
    const page = await freshPage();
    await signInWithSso(page, 'someone@elsewhere.example');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Single sign-on is not set up for that email’s domain.');
    expect(page.url().startsWith(base)).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/sso-domain-refused.png`, fullPage: true });
    await page.context().close();
  });

  it('turns the password off with Require SSO for a non-owner, not for an owner', async () => {
    const admin = await freshPage();
    await signInWithPassword(admin, ADMIN);
    await expect.poll(() => pathOf(admin)).toBe('/dashboard/servers');
    await admin.goto(`${base}/dashboard/team/sso`);
    await admin.getByRole('checkbox', { name: 'Require SSO' }).check();
    await admin.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(async () => admin.getByRole('status').textContent()).toContain('Require SSO is on');
    await admin.context().close();

    const refused = await freshPage();
    await signInWithPassword(refused, ADMIN);
    await refused.getByRole('alert').waitFor();
    expect(await refused.getByRole('alert').textContent()).toContain('Your account requires single sign-on, so its password is turned off');
    expect(pathOf(refused)).toBe('/dashboard/sign-in');
    await refused.screenshot({ path: `${SCREENSHOTS}/sso-required.png`, fullPage: true });
    // The way it points to works for the admin.
    await signInWithSso(refused, ADMIN);
    await finishAtProvider(refused, ADMIN);
    await expect.poll(() => pathOf(refused)).toBe('/dashboard/servers');
    await refused.context().close();

    const owner = await freshPage();
    await signInWithPassword(owner, OWNER);
    await expect.poll(() => pathOf(owner)).toBe('/dashboard/servers');
    await owner.context().close();
  });

  it('reported no console error (no CSP violation) on any page', () => {
    expect(consoleErrors).toEqual([]);
  });
});
