/**
 * Every dashboard page, signed in and with data in it (a business server with two live keys and an
 * allowed redirect URI, an enabled provider, account keys, an end user with a credential and one
 * without, a webhook endpoint with a failed delivery, the audit trail), at 1280 and at 390 px: the
 * document is never wider than the screen (wide tables scroll inside their own panel), and a
 * screenshot of each goes to test-output/screenshots (dashboard-<page>-<width>.png, not committed).
 * No page repeats a heading. The public pages too, and the sign-up-closed page's command stays
 * inside its card.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/dashboard/auth-routes.js';
import { changeBranding } from '../../src/services/branding/branding-changes.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer, rotateServerKey } from '../../src/services/servers/servers.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { type DashboardClient, signUpUser, userByEmail } from '../helpers/dashboard-session.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { pngLogo } from '../helpers/logo-files.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';
import { writeAndDeliver } from '../helpers/webhook-history.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SCREENSHOTS = 'test-output/screenshots';
const WIDTHS = [1280, 390] as const;
// Ids as real identity providers make them: long, and one token that cannot break.
const WITH_CREDENTIAL = 'auth0|5f7c8ba1c2d34e0068a1b2c3';
const WITHOUT_CREDENTIAL = 'google-oauth2|109876543210987654321';
const REDIRECT = 'https://app.acme-corporation.example/settings/integrations/keyward/callback';

/** How wide the document is, and (when wider than the screen) the innermost elements that stick out. */
async function widthOf(page: Page): Promise<{ scrollWidth: number; sticking: string[] }> {
  return page.evaluate(() => {
    const limit = document.documentElement.clientWidth;
    const out = (e: Element) => e.getBoundingClientRect().right > limit + 0.5;
    const sticking = [...document.querySelectorAll('body *')]
      .filter((e) => out(e) && ![...e.children].some(out))
      .slice(0, 6)
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} right=${Math.round(e.getBoundingClientRect().right)}`);
    return { scrollWidth: document.documentElement.scrollWidth, sticking };
  });
}

describe.skipIf(!chromiumAvailable())('every dashboard page at 1280 and 390 px', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let client: DashboardClient;
  /** [screenshot name, path] of every signed-in page that shows something (each form's confirmation too). */
  let signedInPages: [string, string][] = [];

  beforeAll(async () => {
    // `first`: the first sign-up makes the account, every later one shows the sign-up-closed page.
    t = await startTestApp('sqlite', { realClock: true, signup: 'first' });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.ctx.publicUrl = base;
    // A long email and account name: the header shows both.
    const email = 'platform-engineering@acme-corporation.example';
    client = await signUpUser(t.app, { email, accountName: 'Acme Corporation International' });
    const { account_id: accountId } = await userByEmail(t.ctx.store.db, email);
    const { serverId } = await createServer(t.ctx, { accountId: accountId, name: 'Production (EU, primary)', mode: 'business', actor: CLI_ACTOR });
    await enableProvider(t.ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    const { keyId, key } = await createAccountKey(t.ctx, { accountId: accountId, label: 'backend (production, eu-west-1)', actor: CLI_ACTOR });
    const server = `/dashboard/servers/${serverId}`;
    const added = await client.submit(server, `${server}/redirect-uris`, { uri: REDIRECT });
    expect(added.statusCode).toBe(303);
    const { serverKey } = await rotateServerKey(t.ctx, serverId, 3600, CLI_ACTOR);
    // A long display name and a wide logo: the Overview's Branding panel and the Branding page show both.
    await changeBranding(t.ctx, serverId, { displayName: 'Acme Corporation International Payroll', accentColor: '#0f766e', logo: pngLogo(240, 48) }, CLI_ACTOR);
    const headers = keys({ accountKey: key, serverKey });
    await connectStatic(t.app, headers, { externalUserId: WITH_CREDENTIAL, values: { apiKey: 'sk-proj-widthsTESTvalue0123456789abcdef' } });
    await connectStatic(t.app, headers, { externalUserId: WITHOUT_CREDENTIAL, values: { apiKey: 'sk-proj-widthsTESTvalue0123456789abcdef' } });
    // A long profile beneath the id on the Audience tab: display name, email and tags (CONTRACT 10).
    const profile = {
      displayName: 'Maximiliane Alexandra von Hohenberg-Schillingsfürst',
      email: 'maximiliane.von.hohenberg-schillingsfuerst@subsidiary.acme-corporation.example',
      tags: { plan: 'enterprise-annual-2026', region: 'eu-central-1', 'crm.account_id': '0015g00000ABCDEFGHIJKLMNOPQRSTUVWXYZ' },
    };
    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/end-users/${encodeURIComponent(WITH_CREDENTIAL)}`, headers, payload: profile });
    expect(patched.statusCode, patched.body).toBe(200);
    const revoked = await t.app.inject({ method: 'DELETE', url: `/v1/end-users/${encodeURIComponent(WITHOUT_CREDENTIAL)}?provider=openai`, headers });
    expect(revoked.statusCode).toBe(200);
    receiver = await startWebhookReceiver({ status: 400 });
    const { webhookId } = await addWebhookEndpoint(t.ctx, { serverId, url: `${receiver.url}/hooks/keyward/production-eu-primary`, actor: CLI_ACTOR });
    await writeAndDeliver(t, serverId, WITH_CREDENTIAL);

    const audience = `${server}/audience`;
    signedInPages = [
      ['servers', '/dashboard/servers'],
      ['server-overview', server],
      ['server-branding', `${server}/branding`],
      ['server-providers', `${server}/providers`],
      ['server-audience', audience],
      ['audience-revoke', `${audience}/revoke?externalUserId=${encodeURIComponent(WITH_CREDENTIAL)}&provider=openai`],
      ['audience-remove', `${audience}/remove?externalUserId=${encodeURIComponent(WITHOUT_CREDENTIAL)}`],
      ['server-webhooks', `${server}/webhooks`],
      ['webhook', `${server}/webhooks/${webhookId}`],
      ['webhook-remove', `${server}/webhooks/${webhookId}/remove`],
      ['webhook-rotate-secret', `${server}/webhooks/${webhookId}/rotate-secret`],
      ['developer', '/dashboard/developer'],
      ['api-keys', '/dashboard/developer/api-keys'],
      ['api-key-revoke', `/dashboard/developer/api-keys/${keyId}/revoke`],
      ['audit', '/dashboard/audit'],
      ['audit-filtered', '/dashboard/audit?action=server.created&from=2026-01-01'],
      ['team', '/dashboard/team'],
      ['team-sso', '/dashboard/team/sso'],
      ['security', '/dashboard/security'],
    ];
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  async function signedInPage(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    await context.addCookies([{ name: SESSION_COOKIE, value: client.cookies.get(SESSION_COOKIE)!, url: base, httpOnly: true, sameSite: 'Lax' }]);
    return context.newPage();
  }

  /** Screenshots the page and answers what is wider than the screen on it (nothing, when all is well). */
  async function overflowOf(page: Page, name: string, width: number): Promise<string | null> {
    await page.screenshot({ path: `${SCREENSHOTS}/dashboard-${name}-${width}.png`, fullPage: true });
    const { scrollWidth, sticking } = await widthOf(page);
    return scrollWidth <= width ? null : `${name}: ${scrollWidth} px (${sticking.join('; ')})`;
  }

  for (const width of WIDTHS) {
    it(`fits every signed-in page into ${width} px`, async () => {
      const page = await signedInPage(width);
      const overflowing: string[] = [];
      for (const [name, path] of signedInPages) {
        const status = (await page.goto(`${base}${path}`))?.status();
        if (status !== 200) overflowing.push(`${name}: answered ${status}`);
        const overflow = await overflowOf(page, name, width);
        if (overflow) overflowing.push(overflow);
        // No page says its title twice (the revoke confirmation had it as h1 and again as h2).
        const headings = (await page.locator('h1, h2').allTextContents()).map((h) => h.trim());
        if (new Set(headings).size !== headings.length) overflowing.push(`${name}: a heading repeated in ${JSON.stringify(headings)}`);
      }
      // Every page is checked before the test fails, so that one run lists them all.
      // A key shown once: the POST's own page.
      await page.goto(`${base}/dashboard/developer/api-keys`);
      await page.getByLabel('Label').fill(`shown once at ${width}`);
      await page.getByRole('button', { name: 'Generate Key' }).click();
      await page.getByRole('textbox', { name: 'New account API key' }).waitFor();
      const shown = await overflowOf(page, 'api-key-generated', width);
      if (shown) overflowing.push(shown);
      await page.context().close();
      expect(overflowing).toEqual([]);
    }, 120_000);

    it(`fits the public pages into ${width} px, the sign-up-closed command inside its card`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      const overflowing: string[] = [];
      for (const [name, path, status] of [
        ['sign-in', '/dashboard/sign-in', 200],
        ['sign-up-closed', '/dashboard/sign-up', 403],
        ['not-found', '/dashboard/no-such-page', 404],
      ] as const) {
        const answered = (await page.goto(`${base}${path}`))?.status();
        if (answered !== status) overflowing.push(`${name}: answered ${answered}`);
        const overflow = await overflowOf(page, name, width);
        if (overflow) overflowing.push(overflow);
      }
      await page.goto(`${base}/dashboard/sign-up`);
      const command = page.locator('.card pre');
      await expect(command.textContent()).resolves.toContain('npx keyward account create');
      const fit = await command.evaluate((pre) => {
        const card = pre.closest('.card')!.getBoundingClientRect();
        const box = pre.getBoundingClientRect();
        // Wholly inside the card, and all of it readable without scrolling.
        return { inside: box.left >= card.left && box.right <= card.right, hidden: pre.scrollWidth - pre.clientWidth };
      });
      expect(fit).toEqual({ inside: true, hidden: 0 });
      await context.close();
      expect(overflowing).toEqual([]);
    }, 60_000);
  }
});
