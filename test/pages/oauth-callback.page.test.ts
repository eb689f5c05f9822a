/**
 * The OAuth callback's outcomes in a real browser: the provider's redirect lands on Keyward, which
 * shows a page under its CSP with no violation, or sends the browser on to the company's app.
 * Screenshots go to test-output/screenshots (not committed) for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';

const SCREENSHOTS = 'test-output/screenshots';

describe.skipIf(!chromiumAvailable())('the OAuth callback in Chromium', () => {
  let o: OAuthTenant;
  let browser: Browser;
  let appServer: Server;
  let appPage: string;

  beforeAll(async () => {
    o = await startOAuthTenant('sqlite', { realClock: true, listen: true });
    // The company's own page the browser returns to.
    appServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Back in the app</h1>'));
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appPage = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/integrations`;
    await allowRedirectUri(o.t.ctx, o.tenant.serverId, appPage, CLI_ACTOR);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => appServer?.close(resolve));
    await o.close();
  });

  async function visit(url: URL | string): Promise<{ page: Page; errors: string[]; status: number | undefined }> {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const response = await page.goto(String(url));
    return { page, errors, status: response?.status() };
  }

  it('shows the success page after consent when the flow named no redirectUri', async () => {
    const flow = await o.start({ externalUserId: 'browser-1' });
    const { page, errors, status } = await visit(await o.as.approve(flow.authorizationUrl));
    expect(status).toBe(200);
    expect(await page.getByRole('heading', { name: 'Acme connected' }).isVisible()).toBe(true);
    // The stylesheet loaded under the CSP: the card has its computed style, and nothing was blocked.
    expect(await page.locator('main.card').evaluate((el) => getComputedStyle(el).borderRadius)).not.toBe('0px');
    expect(errors).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/oauth-callback-success.png` });
    await page.close();
  });

  it('shows a plain error page when the end user denies access', async () => {
    const flow = await o.start({ externalUserId: 'browser-2' });
    const { page, errors, status } = await visit(await o.as.approve(flow.authorizationUrl, { deny: true }));
    expect(status).toBe(400);
    expect(await page.getByRole('heading', { name: 'Acme not connected' }).isVisible()).toBe(true);
    expect(await page.textContent('main')).toContain('access_denied');
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/oauth-callback-denied.png` });
    await page.close();
  });

  it('says a link is used up when the callback is opened again', async () => {
    const flow = await o.start({ externalUserId: 'browser-3' });
    const back = await o.as.approve(flow.authorizationUrl);
    (await visit(back)).page.close();
    const { page, status } = await visit(back);
    expect(status).toBe(410);
    expect(await page.getByRole('heading', { name: 'Sign-in link no longer valid' }).isVisible()).toBe(true);
    await page.close();
  });

  it('sends the browser on to the app with the outcome', async () => {
    const flow = await o.start({ externalUserId: 'browser-4', redirectUri: appPage });
    const { page } = await visit(await o.as.approve(flow.authorizationUrl));
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(appPage);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ status: 'success', flowId: flow.id, provider: 'acme' });
    expect(await page.getByRole('heading', { name: 'Back in the app' }).isVisible()).toBe(true);
    await page.close();
  });
});
