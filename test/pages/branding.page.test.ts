/**
 * A server's branding in a real browser (CONTRACT 10): the hosted form wearing it at 1280 and 390 px
 * (its logo loaded from Keyward under the page's CSP, its name atop the card, its accent on the button
 * and the focus ring, nothing wider than the screen, no CSP violation), with screenshots in
 * test-output/screenshots for a person to look at. And a logo opened on its own: even an SVG with a
 * script and a handler that had got into storage (written here past the checks, as a checker's bug
 * would let one through) runs nothing under the logo's CSP, though it still draws.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logoPath } from '../../src/services/branding/branding.js';
import { changeBranding } from '../../src/services/branding/branding-changes.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { SVG_LOGO } from '../helpers/logo-files.js';
import { createTenant, keys, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

const SCREENSHOTS = 'test-output/screenshots';
const WIDTHS = [1280, 390] as const;

/** An SVG that would change its title three ways if anything in it ran. */
const HOSTILE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40" onload="document.title='onload ran'">
<title>Logo</title>
<script>document.title = 'script ran';</script>
<rect id="drawn" width="40" height="40" fill="#0f766e"/>
<image href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E" onerror="document.title='handler ran'" onload="document.title='handler ran'"/>
</svg>`;

describe.skipIf(!chromiumAvailable())('branding in Chromium', () => {
  let t: TestApp;
  let tenant: Tenant;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    tenant = await createTenant(t.ctx, { providers: ['openai'] });
    await changeBranding(t.ctx, tenant.serverId, { displayName: 'Acme Payroll', accentColor: '#0f766e', logo: Buffer.from(SVG_LOGO) }, CLI_ACTOR);
    t.ctx.publicUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  async function formUrl(externalUserId: string): Promise<string> {
    const created = await t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers: keys(tenant), payload: { externalUserId } });
    expect(created.statusCode).toBe(201);
    return created.json().url as string;
  }

  async function openPage(width: number): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    return { page, errors };
  }

  for (const width of WIDTHS) {
    it(`shows the hosted form in the server's branding at ${width} px`, async () => {
      const { page, errors } = await openPage(width);
      await page.goto(await formUrl(`branded-${width}`));
      await expect(page.getByRole('heading', { name: 'Connect OpenAI' }).isVisible()).resolves.toBe(true);
      await expect(page.getByText('Acme Payroll', { exact: true }).isVisible()).resolves.toBe(true);
      const looks = await page.evaluate(() => {
        const logo = document.querySelector<HTMLImageElement>('img.brand-logo')!;
        const button = document.querySelector('button')!;
        const card = document.querySelector('.card')!.getBoundingClientRect();
        const logoBox = logo.getBoundingClientRect();
        return {
          logoLoaded: logo.complete && logo.naturalWidth > 0,
          logoHeight: Math.round(logoBox.height),
          logoInsideCard: logoBox.left >= card.left && logoBox.right <= card.right,
          buttonBackground: getComputedStyle(button).backgroundColor,
          buttonText: getComputedStyle(button).color,
          scrollWidth: document.documentElement.scrollWidth,
          cardWidth: Math.round(card.width),
        };
      });
      expect(looks.logoLoaded).toBe(true);
      expect(looks.logoHeight).toBe(40);
      expect(looks.logoInsideCard).toBe(true);
      expect(looks.buttonBackground).toBe('rgb(15, 118, 110)');
      expect(looks.buttonText).toBe('rgb(255, 255, 255)');
      expect(looks.scrollWidth).toBeLessThanOrEqual(width);
      expect(looks.cardWidth).toBe(width === 390 ? 390 - 32 : 440);
      // The focus ring is the accent too.
      await page.getByLabel('API key').focus();
      expect(await page.getByLabel('API key').evaluate((input) => getComputedStyle(input).outlineColor)).toBe('rgb(15, 118, 110)');
      await page.screenshot({ path: `${SCREENSHOTS}/branded-hosted-form-${width}.png`, fullPage: true });

      await page.getByLabel('API key').fill('sk-proj-typedinthebrowser0123456789');
      await page.getByRole('button', { name: 'Connect OpenAI' }).click();
      await page.getByRole('heading', { name: 'OpenAI connected' }).waitFor();
      await expect(page.getByText('Acme Payroll', { exact: true }).isVisible()).resolves.toBe(true);
      await page.screenshot({ path: `${SCREENSHOTS}/branded-hosted-form-success-${width}.png`, fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('serves a logo that, opened on its own, runs no script and no handler, and still draws', async () => {
    // Past the checks, straight into storage: what the served headers alone must make harmless.
    const version = 'f00dfacef00dface';
    await t.ctx.store.branding.save(tenant.serverId, { logo: { bytes: Buffer.from(HOSTILE_SVG), type: 'image/svg+xml', version } }, new Date().toISOString());
    const { page, errors } = await openPage(390);
    const response = await page.goto(`${t.ctx.publicUrl}${logoPath(tenant.serverId, version)}`);
    expect(response?.status()).toBe(200);
    await page.waitForTimeout(300);
    expect(await page.title()).toBe('Logo');
    expect(response?.headers()['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(await page.evaluate(() => document.getElementById('drawn')?.getBoundingClientRect().width)).toBeGreaterThan(0);
    // The browser says why: the CSP refused the script (and the sandbox every handler).
    expect(errors.length).toBeGreaterThan(0);
    await page.screenshot({ path: `${SCREENSHOTS}/branded-logo-opened-directly.png` });
    await page.close();
  });
});
