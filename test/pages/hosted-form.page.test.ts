/**
 * The hosted static form in a real browser: the page renders under its CSP with no violation, a bad
 * value comes back beside its field, a good one ends on the success page or at the redirect URI.
 * Screenshots go to test-output/screenshots (not committed) for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { createTenant, keys, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

const SCREENSHOTS = 'test-output/screenshots';
const REDIRECT = 'http://127.0.0.1:9/after-connect';

describe.skipIf(!chromiumAvailable())('the hosted form in Chromium', () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    tenant = await createTenant(t.ctx, { providers: ['openai', 'twilio'] });
    await allowRedirectUri(t.ctx, tenant.serverId, REDIRECT, CLI_ACTOR);
    // Form URLs are built on the public URL, known once the service listens on a real socket.
    t.ctx.publicUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  async function formUrl(provider: string, externalUserId: string, redirectUri?: string): Promise<string> {
    const created = await t.app.inject({
      method: 'POST',
      url: `/v1/credentials/static/${provider}/connect`,
      headers: keys(tenant),
      payload: { externalUserId, ...(redirectUri ? { redirectUri } : {}) },
    });
    expect(created.statusCode).toBe(201);
    return created.json().url as string;
  }

  /** A page that records every console error (CSP violations are reported there). */
  async function openPage(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 900, height: 760 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    return { page, errors };
  }

  it('shows the fields, refuses a bad value beside its field, then stores a good one', async () => {
    const { page, errors } = await openPage();
    await page.goto(await formUrl('twilio', 'browser-user-1'));
    await expect(page.getByRole('heading', { name: 'Connect Twilio' }).isVisible()).resolves.toBe(true);
    // Every control is reachable by its visible name.
    const sid = page.getByLabel('Account SID');
    const token = page.getByLabel('Auth token');
    expect(await token.getAttribute('type')).toBe('password');
    await page.screenshot({ path: `${SCREENSHOTS}/hosted-form.png`, fullPage: true });

    await sid.fill('not-a-sid');
    await token.fill('twilio-auth-token-typed-in-browser');
    await page.getByRole('button', { name: 'Connect Twilio' }).click();
    await page.waitForLoadState();
    const message = page.locator('#field-accountSid-error');
    expect(await message.textContent()).toContain('Account SID');
    expect(await page.getByLabel('Account SID').inputValue()).toBe('not-a-sid');
    expect(await page.getByLabel('Auth token').inputValue()).toBe('');
    await page.screenshot({ path: `${SCREENSHOTS}/hosted-form-error.png`, fullPage: true });

    await page.getByLabel('Account SID').fill(`AC${'0123456789abcdef'.repeat(2)}`);
    await page.getByLabel('Auth token').fill('twilio-auth-token-typed-in-browser');
    await page.getByRole('button', { name: 'Connect Twilio' }).click();
    await page.getByRole('heading', { name: 'Twilio connected' }).waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}/hosted-form-success.png`, fullPage: true });
    // The refused submission's 422 is the only failed load; no CSP violation, no missing asset.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)']);

    const read = await t.app.inject({ method: 'GET', url: '/v1/end-users/browser-user-1', headers: keys(tenant) });
    expect(read.json().credentials[0].values).toEqual({
      accountSid: `AC${'0123456789abcdef'.repeat(2)}`,
      authToken: 'twilio-auth-token-typed-in-browser',
    });
    await page.close();
  });

  it('follows the 303 to the redirect URI with the session id, allowed by the CSP', async () => {
    const { page, errors } = await openPage();
    const url = await formUrl('openai', 'browser-user-2', REDIRECT);
    await page.goto(url);
    await page.getByLabel('API key').fill('sk-proj-typedinthebrowser0123456789');
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(REDIRECT)),
      page.getByRole('button', { name: 'Connect OpenAI' }).click(),
    ]);
    const landed = new URL(request.url());
    expect(landed.searchParams.get('status')).toBe('success');
    expect(landed.searchParams.get('provider')).toBe('openai');
    expect(landed.searchParams.get('sessionId')).toMatch(/^cfs_/);
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await page.close();
  });

  it('shows a used link as no longer valid', async () => {
    const { page } = await openPage();
    const url = await formUrl('openai', 'browser-user-3');
    await page.goto(url);
    await page.getByLabel('API key').fill('sk-proj-typedinthebrowser0123456789');
    await page.getByRole('button', { name: 'Connect OpenAI' }).click();
    await page.getByRole('heading', { name: 'OpenAI connected' }).waitFor();
    const again = await page.goto(url);
    expect(again?.status()).toBe(410);
    await expect(page.getByRole('heading', { name: 'Link no longer valid' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/hosted-form-gone.png`, fullPage: true });
    await page.close();
  });
});
