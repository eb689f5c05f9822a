/**
 * The dashboard in a real browser, as a user uses it (CONTRACT 6): sign up, then sign in with the
 * same email and password (sign-up answers alike whether or not the email had an account), create a business
 * server, enable a static provider, generate an account API key and read it from the page, use it with
 * the server key against the management API, revoke it (the next call is refused), rotate the server
 * key, and a user of another account cannot reach any of it by URL. Every control is found by its
 * visible name. Screenshots of each main page go to test-output/screenshots (not committed).
 */
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SCREENSHOTS = 'test-output/screenshots';

describe.skipIf(!chromiumAvailable())('the dashboard in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: BrowserContext;
  let page: Page;
  /** Console errors of every page: a CSP violation or a script error shows up here. */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.ctx.publicUrl = base;
    browser = await launchChromium();
    owner = await browser.newContext({ viewport: { width: 1200, height: 860 } });
    // A step that cannot happen fails in 10 s naming its locator, not at the test's 30 s with no clue.
    owner.setDefaultTimeout(10_000);
    await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await owner.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) consoleErrors.push(message.text());
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  const shot = (name: string, target: Page = page) => target.screenshot({ path: `${SCREENSHOTS}/dashboard-${name}.png`, fullPage: true });

  async function api(path: string, accountKey: string, serverKey: string, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const mainNav = (target: Page = page) => target.getByRole('navigation', { name: 'Main' });

  /** "Create account", then "Sign in" with the same email and password, as the page after sign-up asks. */
  async function signUpAndIn(target: Page, company: string, email: string, password: string, screenshots = false) {
    await target.getByLabel('Company or team name').fill(company);
    await target.getByLabel('Email').fill(email);
    await target.getByLabel('Password').fill(password);
    if (screenshots) await shot('sign-up', target);
    await target.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => new URL(target.url()).pathname).toBe('/dashboard/sign-in');
    await expect(target.getByRole('status').textContent()).resolves.toContain('Sign in with the email and password you just entered.');
    if (screenshots) await shot('signed-up', target);
    await target.getByLabel('Email').fill(email);
    await target.getByLabel('Password').fill(password);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => new URL(target.url()).pathname).toBe('/dashboard/servers');
  }

  async function generateKey(label: string): Promise<string> {
    await mainNav().getByRole('link', { name: 'Developer' }).click();
    await page.getByRole('link', { name: 'Account API Keys' }).click();
    await page.getByLabel('Label').fill(label);
    await page.getByRole('button', { name: 'Generate Key' }).click();
    return page.getByRole('textbox', { name: 'New account API key' }).inputValue();
  }

  // Filled in as the scenario goes; the later steps use them.
  let serverPath = '';
  let serverKey = '';
  let accountKey = '';
  let revokePath = '';

  it('signs a new user up with "Create account", then in', async () => {
    await page.goto(`${base}/dashboard`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await expect(page.getByRole('button', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await shot('sign-in');
    await page.getByRole('link', { name: 'Create account' }).click();
    await signUpAndIn(page, 'Acme', 'founder@acme.example', 'correct horse battery staple', true);
    await expect(page.getByText('No servers yet.').isVisible()).resolves.toBe(true);
    await shot('servers-empty');
  });

  it('creates a business server and shows its key once', async () => {
    await page.getByLabel('Name').fill('Production');
    await page.getByLabel('Mode').selectOption('business');
    await page.getByRole('button', { name: 'Create server' }).click();
    serverKey = await page.getByRole('textbox', { name: 'Server API key' }).inputValue();
    expect(serverKey).toMatch(/^service_srv_[0-9a-f]{72}$/);
    await expect(page.getByText('it will not be shown again').isVisible()).resolves.toBe(true);
    await shot('server-created');
    serverPath = new URL((await page.getByRole('link', { name: 'Overview' }).getAttribute('href')) ?? '', base).pathname;
    expect(serverPath).toMatch(/^\/dashboard\/servers\/srv_[0-9a-f]+$/);
    await page.goto(`${base}${serverPath}`);
    expect(await page.content()).not.toContain(serverKey);
  });

  it('enables a static provider on the server', async () => {
    await page.getByRole('link', { name: 'Providers' }).click();
    await page.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI (static API key)' });
    await page.getByRole('button', { name: 'Enable provider' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/enabled/i);
    await expect(page.getByRole('cell', { name: 'OpenAI' }).first().isVisible()).resolves.toBe(true);
    await shot('providers');
  });

  it('generates an account API key, read from the page, that works with the server key', async () => {
    accountKey = await generateKey('backend (production)');
    expect(accountKey).toMatch(/^service_acct_[0-9a-f]{72}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(accountKey);
    await shot('key-generated');

    const connect = await api('/v1/credentials/static/openai/connect', accountKey, serverKey, { externalUserId: 'auth0|u42' });
    expect(connect.status).toBe(201);
    // The end user fills the hosted form, so the audience has someone in it.
    const form = await owner.newPage();
    await form.goto(connect.body.url as string);
    await form.getByLabel('API key').fill('sk-proj-browserTESTvalue0123456789abcdef');
    await form.getByRole('button', { name: 'Connect OpenAI' }).click();
    await form.close();
    expect((await api('/v1/end-users', accountKey, serverKey)).status).toBe(200);
  });

  it('revokes the key behind a confirmation, and the very next API call is refused', async () => {
    await page.goto(`${base}/dashboard/developer/api-keys`);
    expect(await page.content()).not.toContain(accountKey);
    await page.getByRole('button', { name: 'Revoke backend (production)' }).click();
    revokePath = new URL(page.url()).pathname;
    await expect(page.getByRole('heading', { name: 'Revoke account API key' }).isVisible()).resolves.toBe(true);
    await shot('key-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/revoked/i);
    await shot('keys');
    const refused = await api('/v1/end-users', accountKey, serverKey);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('account_key_revoked');
  });

  it('makes one key on a double click of "Generate Key", and shows it', async () => {
    await page.goto(`${base}/dashboard/developer/api-keys`);
    await page.getByLabel('Label').fill('double click');
    await page.getByRole('button', { name: 'Generate Key' }).dblclick();
    // Without dashboard.js the second POST's answer ("already submitted") would replace the key's page.
    const shown = await page.getByRole('textbox', { name: 'New account API key' }).inputValue({ timeout: 5000 });
    expect(shown).toMatch(/^service_acct_[0-9a-f]{72}$/);
    const made = await t.ctx.store.db.selectFrom('account_keys').select('hint').where('label', '=', 'double click').execute();
    expect(made).toHaveLength(1);
    expect(shown.endsWith(made[0]!.hint.slice(-4))).toBe(true);
  });

  it('rotates the server key: the new key works, the old one stops', async () => {
    const freshKey = await generateKey('backend (rotation)');
    await page.goto(`${base}${serverPath}`);
    await page.getByLabel('Grace period').selectOption({ label: 'No grace: the old key stops at once' });
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const rotated = await page.getByRole('textbox', { name: 'New server API key' }).inputValue();
    expect(rotated).toMatch(/^service_srv_[0-9a-f]{72}$/);
    expect(rotated).not.toBe(serverKey);
    await shot('server-rotated');
    expect((await api('/v1/end-users', freshKey, rotated)).status).toBe(200);
    const old = await api('/v1/end-users', freshKey, serverKey);
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('service_key_revoked');
  });

  it('shows the audience without secrets, and the audit trail', async () => {
    await page.goto(`${base}${serverPath}/audience`);
    await expect(page.getByRole('cell', { name: 'auth0|u42' }).isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain('sk-proj-browserTESTvalue');
    await shot('audience');
    await mainNav().getByRole('link', { name: 'Audit' }).click();
    const audit = (await page.textContent('main')) ?? '';
    expect(audit).toContain('founder@acme.example');
    expect(audit).toMatch(/backend \(production\)/);
    await shot('audit');
    expect(consoleErrors).toEqual([]);
  });

  it("keeps a second account's user out of the first account's pages and keys", async () => {
    const other = await browser.newContext();
    const intruder = await other.newPage();
    try {
      await intruder.goto(`${base}/dashboard/sign-up`);
      await signUpAndIn(intruder, 'Rival', 'rival@rival.example', 'another long password');
      for (const path of [serverPath, `${serverPath}/providers`, `${serverPath}/audience`, revokePath]) {
        const response = await intruder.goto(`${base}${path}`);
        expect(response?.status(), path).toBe(404);
        await expect(intruder.getByRole('heading', { name: 'Page not found' }).isVisible()).resolves.toBe(true);
      }
      await intruder.goto(`${base}/dashboard/developer/api-keys`);
      expect(await intruder.content()).not.toContain('backend (production)');
      await intruder.goto(`${base}/dashboard/audit`);
      expect(await intruder.content()).not.toContain('founder@acme.example');
      await shot('other-account-404', intruder);
    } finally {
      await other.close();
    }
  });
});
