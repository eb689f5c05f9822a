/**
 * The Connect page (CONTRACT 10) in Chromium: with JavaScript off (a static provider connected and
 * disconnected, an OAuth provider through a real authorization server and back), at 390 px with no
 * horizontal scroll, under its CSP with no violation; and /connect.js on a company's page served from
 * another origin (`localhost`, while Keyward is reached on `127.0.0.1`): the popup resolves
 * `connected` (through a static provider and through OAuth), closing it resolves `closed`, a page on
 * an origin the session does not allow gets no message at all, and a blocked popup becomes a
 * full-page redirect that comes back to the redirect URI with the outcome. With the provider's pages
 * sending Cross-Origin-Opener-Policy (as Google's and Microsoft's do), the browser severs the popup
 * from the company's page: connect.js then reads the outcome from the page's status instead. Screenshots go to
 * test-output/screenshots (not committed) for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeBranding } from '../../src/services/branding/branding-changes.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { type CreatedSession, createSession } from '../helpers/connect-page.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';

const SCREENSHOTS = 'test-output/screenshots';
const OPENAI_KEY = 'sk-proj-typedintheconnectpage0123456789';
const BRAND = 'Acme Analytics';
const ACCENT = '#0f766e';
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40"><rect width="40" height="40" rx="9" fill="#0f766e"/><path d="M12 28 20 10l8 18" stroke="#fff" stroke-width="4" fill="none"/></svg>';

/** The company's page: connect.js from Keyward, a button that opens the session it is given, and every message it receives. */
const customerPage = (keyward: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Acme app</title><script src="${keyward}/connect.js"></script></head>
<body><h1>Acme app</h1><button id="connect">Connect your accounts</button>
<script>
  window.results = []; window.events = []; window.messages = [];
  window.addEventListener('message', (message) => window.messages.push({ origin: message.origin, data: message.data }));
  document.getElementById('connect').addEventListener('click', async () => {
    const url = new URLSearchParams(location.search).get('session');
    window.results.push(await Keyward.connect(url, { onEvent: (event) => window.events.push(event) }));
  });
</script></body></html>`;

/** How wide the document is, and (when wider than the screen) the innermost elements that stick out. */
async function widthOf(page: Page): Promise<{ scrollWidth: number; clientWidth: number; sticking: string[] }> {
  return page.evaluate(() => {
    const limit = document.documentElement.clientWidth;
    const out = (e: Element) => e.getBoundingClientRect().right > limit + 0.5;
    const sticking = [...document.querySelectorAll('body *')]
      .filter((e) => out(e) && ![...e.children].some(out))
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`);
    return { scrollWidth: document.documentElement.scrollWidth, clientWidth: limit, sticking };
  });
}

describe.skipIf(!chromiumAvailable())('the Connect page and connect.js in Chromium', { timeout: 90_000 }, () => {
  let o: OAuthTenant;
  let browser: Browser;
  let app: Server;
  /** The company's app, on localhost: another origin (and site) than Keyward's 127.0.0.1. */
  let appOrigin: string;

  beforeAll(async () => {
    o = await startOAuthTenant('sqlite', { realClock: true, listen: true });
    await enableProvider(o.t.ctx, { serverId: o.tenant.serverId, slug: 'twilio', actor: CLI_ACTOR });
    // The server's branding (CONTRACT 10): its name, colour and logo on every Connect page.
    await changeBranding(o.t.ctx, o.tenant.serverId, { displayName: BRAND, accentColor: ACCENT, logo: Buffer.from(LOGO) }, CLI_ACTOR);
    app = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (path === '/back') return response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Back in the app</h1>');
      response.writeHead(200, { 'content-type': 'text/html' }).end(customerPage(o.t.ctx.publicUrl));
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://localhost:${(app.address() as AddressInfo).port}`;
    await allowRedirectUri(o.t.ctx, o.tenant.serverId, `${appOrigin}/back`, CLI_ACTOR);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => app?.close(resolve));
    await o?.close();
  });

  const session = (externalUserId: string, extra: Record<string, unknown> = {}) =>
    createSession(o.t.app, o.headers, { externalUserId, providers: ['acme', 'openai', 'twilio'], ...extra });

  /** A page of its own context, recording console errors (CSP violations are reported there). */
  async function openPage(options: { javaScriptEnabled?: boolean; width?: number } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled ?? true, viewport: { width: options.width ?? 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    return { context, page, errors };
  }

  /**
   * Clicks Acme's "Connect" on a Connect page, lets the real authorization server's consent be given
   * (as the end user, outside this browser), and brings this browser back through the callback.
   */
  async function connectAcme(page: Page): Promise<void> {
    const [authorization] = await Promise.all([
      page.waitForRequest((request) => request.url().startsWith(o.as.authorizationUrl)),
      page.locator('#provider-acme').getByRole('button', { name: 'Connect' }).click(),
    ]);
    // The browser is still being redirected to the authorization server's consent page; going to the
    // callback before it lands there races that redirect (Chromium drops one of the two navigations).
    const authorizationOrigin = new URL(o.as.authorizationUrl).origin;
    await page.waitForURL((url) => url.origin === authorizationOrigin && url.pathname.startsWith('/interaction/'));
    const back = await o.as.approve(authorization.url());
    await page.goto(back.href);
  }

  it('works with JavaScript off: a static provider connected and disconnected, OAuth through the provider and back', async () => {
    const created = await session('nojs-user', { endUser: { displayName: 'Grace Hopper' } });
    const { context, page, errors } = await openPage({ javaScriptEnabled: false });
    await page.goto(created.url);
    await expect(page.getByRole('heading', { name: 'Connect your accounts' }).isVisible()).resolves.toBe(true);
    expect(await page.locator('.connecting-as').textContent()).toBe('Connecting as Grace Hopper');
    // The stylesheet loaded under the CSP.
    expect(await page.locator('main.card').evaluate((el) => getComputedStyle(el).borderRadius)).not.toBe('0px');

    const openai = page.locator('#provider-openai');
    await openai.getByLabel('API key').fill(OPENAI_KEY);
    await openai.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('OpenAI connected.').waitFor();
    expect(await page.locator('#provider-openai .provider-state').textContent()).toBe('Connected');

    await connectAcme(page);
    await page.getByText('Acme connected.').waitFor();
    expect(await page.locator('#provider-acme .provider-state').textContent()).toBe('Connected');
    await page.screenshot({ path: `${SCREENSHOTS}/connect-page-nojs.png`, fullPage: true });

    await page.locator('#provider-openai').getByRole('button', { name: 'Disconnect' }).click();
    await page.getByRole('heading', { name: 'Disconnect OpenAI?' }).waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}/connect-page-disconnect.png`, fullPage: true });
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('OpenAI disconnected.').waitFor();
    expect(await page.locator('#provider-openai .provider-state').textContent()).toBe('Not connected');

    const read = await o.t.app.inject({ method: 'GET', url: '/v1/end-users/nojs-user', headers: o.headers });
    expect(read.json().credentials.map((c: { provider: string }) => c.provider)).toEqual(['acme']);
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await context.close();
  });

  it('fits 1280 and 390 px with no horizontal scroll, and reads well (screenshots)', async () => {
    const longName = 'Maximiliana Wolfeschlegelsteinhausenbergerdorff-Oberhauser';
    const created = await session('auth0|5f7c8ba1c2d34e0068a1b2c3', { endUser: { displayName: longName } });
    // One provider connected, so the page shows both states.
    const seed = await openPage();
    await seed.page.goto(created.url);
    await seed.page.locator('#provider-openai').getByLabel('API key').fill(OPENAI_KEY);
    await seed.page.locator('#provider-openai').getByRole('button', { name: 'Connect' }).click();
    await seed.page.getByText('OpenAI connected.').waitFor();
    await seed.context.close();
    for (const width of [1280, 390]) {
      const { context, page, errors } = await openPage({ width });
      await page.goto(created.url);
      // Branded: the company's name and logo atop the card, its colour on the buttons.
      expect(await page.locator('.brand-name').textContent()).toBe(BRAND);
      expect(await page.locator('img.brand-logo').evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      expect(await page.locator('#provider-acme button').evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(15, 118, 110)');
      const measured = await widthOf(page);
      expect(measured.sticking, `elements wider than ${width} px`).toEqual([]);
      expect(measured.scrollWidth).toBeLessThanOrEqual(measured.clientWidth);
      // Every button is large enough to tap, and the name wraps instead of overflowing.
      for (const box of await page.locator('button').evaluateAll((buttons) => buttons.map((b) => b.getBoundingClientRect().height))) {
        expect(box).toBeGreaterThanOrEqual(36);
      }
      await page.screenshot({ path: `${SCREENSHOTS}/connect-page-${width}.png`, fullPage: true });
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  /**
   * The company's page on localhost, and the popup its button opens. `watchPopup`: the page keeps the
   * handle window.open gave connect.js (as `popupHandle`), to see what the page sees of the popup.
   */
  async function openFromApp(created: CreatedSession, options: { blockPopups?: boolean; watchPopup?: boolean } = {}) {
    const { context, page, errors } = await openPage();
    if (options.blockPopups) await page.addInitScript(() => (window.open = () => null));
    if (options.watchPopup) {
      await page.addInitScript(() => {
        const open = window.open;
        window.open = (...args) => {
          const handle = open.apply(window, args);
          (window as unknown as { popupHandle: Window | null }).popupHandle = handle;
          return handle;
        };
      });
    }
    await page.goto(`${appOrigin}/?session=${encodeURIComponent(created.url)}`);
    if (options.blockPopups) {
      await page.getByRole('button', { name: 'Connect your accounts' }).click();
      return { context, page, errors, popup: null };
    }
    const [popup] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Connect your accounts' }).click()]);
    await popup.waitForLoadState();
    return { context, page, errors, popup };
  }

  const results = (page: Page) => page.evaluate(() => (window as unknown as { results: unknown[] }).results);
  const events = (page: Page) => page.evaluate(() => (window as unknown as { events: unknown[] }).events);
  const messages = (page: Page) => page.evaluate(() => (window as unknown as { messages: unknown[] }).messages);
  async function settled(page: Page, timeout = 10_000): Promise<unknown[]> {
    await page.waitForFunction(() => (window as unknown as { results: unknown[] }).results.length > 0, undefined, { timeout });
    return results(page);
  }

  it('connect.js: the popup resolves "connected" at the first connection and closes itself', async () => {
    const created = await session('popup-user', { allowedOrigins: [appOrigin], redirectUri: `${appOrigin}/back` });
    const { context, page, popup } = await openFromApp(created);
    expect(popup!.url()).toBe(created.url);
    await popup!.screenshot({ path: `${SCREENSHOTS}/connect-page-popup.png`, fullPage: true });
    await popup!.locator('#provider-openai').getByLabel('API key').fill(OPENAI_KEY);
    await popup!.locator('#provider-openai').getByRole('button', { name: 'Connect' }).click();
    const [result] = await settled(page);
    const credential = (await o.t.app.inject({ method: 'GET', url: '/v1/end-users/popup-user', headers: o.headers })).json().credentials[0];
    expect(result).toEqual({ status: 'connected', provider: 'openai', credentialId: credential.id });
    expect(await events(page)).toEqual([{ type: 'connected', provider: 'openai', credentialId: credential.id }]);
    await expect.poll(() => popup!.isClosed()).toBe(true);
    // The popup stayed on the page rather than going to the redirect URI: the company's page never left.
    expect(page.url().startsWith(appOrigin)).toBe(true);
    await context.close();
  });

  it('connect.js: OAuth in the popup, through the provider and back, resolves "connected"', async () => {
    const created = await session('popup-oauth', { allowedOrigins: [appOrigin] });
    const { context, page, popup } = await openFromApp(created);
    await connectAcme(popup!);
    const [result] = await settled(page);
    const credential = (await o.t.app.inject({ method: 'GET', url: '/v1/end-users/popup-oauth', headers: o.headers })).json().credentials[0];
    expect(result).toEqual({ status: 'connected', provider: 'acme', credentialId: credential.id });
    await context.close();
  });

  /** The company page's reads of a Connect page's status (what connect.js does once its popup is severed). */
  function statusReads(page: Page): string[] {
    const reads: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.endsWith('/status')) reads.push(request.url());
    });
    return reads;
  }

  it('connect.js: closing the popup on the Connect page resolves "closed" at once, reading no status after it', async () => {
    const created = await session('closing-user', { allowedOrigins: [appOrigin] });
    const { context, page, popup } = await openFromApp(created);
    const reads = statusReads(page);
    // The page has told connect.js it is shown (so that its closing is the end user's, not a provider's).
    await popup!.waitForLoadState('load');
    // connect.js reads the status once as it opens the popup (which flow is older than it); then no more.
    await expect.poll(() => reads.length).toBeLessThanOrEqual(1);
    const readsBeforeClosing = reads.length;
    await popup!.close();
    expect(await settled(page)).toEqual([{ status: 'closed' }]);
    expect(await events(page)).toEqual([]);
    // Resolved by its watch (every 300 ms), not after asking the page's status: its first read would come at once.
    expect(reads.length).toBe(readsBeforeClosing);
    await context.close();
  });

  /**
   * With the authorization server's pages sending Cross-Origin-Opener-Policy: same-origin, clicks Acme's
   * "Connect" in the popup and checks the browser really severed it: the company's page sees it
   * closed (and has not resolved "closed") while the popup is still open at the provider's page.
   * Returns the authorization request, for the end user's consent.
   */
  async function leaveForSeveringProvider(page: Page, popup: Page) {
    const [authorization] = await Promise.all([
      popup.waitForRequest((request) => request.url().startsWith(o.as.authorizationUrl)),
      popup.locator('#provider-acme').getByRole('button', { name: 'Connect' }).click(),
    ]);
    const authorizationOrigin = new URL(o.as.authorizationUrl).origin;
    await popup.waitForURL((url) => url.origin === authorizationOrigin && url.pathname.startsWith('/interaction/'));
    await expect.poll(() => page.evaluate(() => (window as unknown as { popupHandle: Window }).popupHandle.closed)).toBe(true);
    expect(popup.isClosed()).toBe(false);
    return authorization;
  }

  /** Brings the severed popup back through the callback (not waiting for a page that closes itself), noting whether it had an opener there. */
  async function comeBackSevered(popup: Page, back: URL): Promise<string[]> {
    const openers: string[] = [];
    popup.on('console', (message) => {
      if (message.text().startsWith('opener:')) openers.push(message.text());
    });
    await popup.context().addInitScript(() => {
      if (location.pathname.startsWith('/connect/s/')) console.info(`opener: ${window.opener === null ? 'none' : 'present'}`);
    });
    await popup.goto(back.href, { waitUntil: 'commit' });
    return openers;
  }

  it('connect.js: a popup severed by the provider’s Cross-Origin-Opener-Policy still resolves "connected", read from the page’s status', async () => {
    const created = await session('severed-oauth', { allowedOrigins: [appOrigin] });
    o.as.openerPolicy = 'same-origin';
    try {
      const { context, page, popup, errors } = await openFromApp(created, { watchPopup: true });
      const reads = statusReads(page);
      const authorization = await leaveForSeveringProvider(page, popup!);
      // The end user is still consenting: connect.js waits, asking the page's status, rather than resolving "closed".
      await expect.poll(() => reads.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      expect(await results(page)).toEqual([]);
      expect(await events(page)).toEqual([]);

      const back = await o.as.approve(authorization.url());
      const openers = await comeBackSevered(popup!, back);
      // Back on the Connect page with no opener to tell, the popup closes itself all the same.
      await expect.poll(() => popup!.isClosed(), { timeout: 10_000 }).toBe(true);
      expect(openers).toEqual(['opener: none']);
      const [result] = await settled(page);
      const credential = await o.read('severed-oauth');
      expect(result).toEqual({ status: 'connected', provider: 'acme', credentialId: credential.id });
      expect(await events(page)).toEqual([{ type: 'connected', provider: 'acme', credentialId: credential.id }]);
      // connect.js's own messages ("shown", "leaving") reached the page, and were never events.
      expect((await messages(page)).map((m) => (m as { data: { type: string } }).data.type)).toEqual(['shown', 'leaving']);
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      o.as.openerPolicy = null;
    }
  });

  const deniedEvent = { type: 'error', provider: 'acme', code: 'access_denied' };

  it('connect.js: a severed popup whose consent is refused tells the error at once, and resolves "error" when no new attempt follows', async () => {
    const created = await session('severed-denied', { allowedOrigins: [appOrigin] });
    o.as.openerPolicy = 'same-origin';
    try {
      const { context, page, popup } = await openFromApp(created, { watchPopup: true });
      const authorization = await leaveForSeveringProvider(page, popup!);
      const back = await o.as.approve(authorization.url(), { deny: true });
      const openers = await comeBackSevered(popup!, back);
      // The popup stays on the page, which says what happened and offers to try again.
      await popup!.getByText('Not connected (access_denied). You can try again.').waitFor();
      expect(openers).toEqual(['opener: none']);
      await expect.poll(() => events(page), { timeout: 10_000 }).toEqual([deniedEvent]);
      // connect.js gives the end user about 10 s to try again in the popup before it resolves.
      expect(await results(page)).toEqual([]);
      expect(await settled(page, 30_000)).toEqual([{ status: 'error', code: 'access_denied' }]);
      expect(await events(page)).toEqual([deniedEvent]);
      await context.close();
    } finally {
      o.as.openerPolicy = null;
    }
  });

  it('connect.js: after a refusal in a severed popup, the end user’s new attempt there is followed to "connected"', async () => {
    const created = await session('severed-retry', { allowedOrigins: [appOrigin] });
    o.as.openerPolicy = 'same-origin';
    try {
      const { context, page, popup } = await openFromApp(created, { watchPopup: true });
      const denied = await leaveForSeveringProvider(page, popup!);
      await comeBackSevered(popup!, await o.as.approve(denied.url(), { deny: true }));
      await popup!.getByText('Not connected (access_denied). You can try again.').waitFor();
      await expect.poll(() => events(page), { timeout: 10_000 }).toEqual([deniedEvent]);

      // "Connect" again, in the popup the company's page can no longer hear.
      const [again] = await Promise.all([
        popup!.waitForRequest((request) => request.url().startsWith(o.as.authorizationUrl)),
        popup!.locator('#provider-acme').getByRole('button', { name: 'Connect' }).click(),
      ]);
      const authorizationOrigin = new URL(o.as.authorizationUrl).origin;
      await popup!.waitForURL((url) => url.origin === authorizationOrigin && url.pathname.startsWith('/interaction/'));
      await popup!.goto((await o.as.approve(again.url())).href, { waitUntil: 'commit' });
      await expect.poll(() => popup!.isClosed(), { timeout: 10_000 }).toBe(true);
      const [result] = await settled(page);
      const credential = await o.read('severed-retry');
      expect(result).toEqual({ status: 'connected', provider: 'acme', credentialId: credential.id });
      expect(await events(page)).toEqual([deniedEvent, { type: 'connected', provider: 'acme', credentialId: credential.id }]);
      await context.close();
    } finally {
      o.as.openerPolicy = null;
    }
  });

  it('connect.js: a page on an origin the session does not allow gets no message', async () => {
    const created = await session('other-origin', { allowedOrigins: ['https://app.example'] });
    const { context, page, popup } = await openFromApp(created);
    await popup!.locator('#provider-openai').getByLabel('API key').fill(OPENAI_KEY);
    await popup!.locator('#provider-openai').getByRole('button', { name: 'Connect' }).click();
    // The connection happened (and the popup closed itself), but nothing reached the company's page.
    expect(await settled(page)).toEqual([{ status: 'closed' }]);
    const read = await o.t.app.inject({ method: 'GET', url: '/v1/end-users/other-origin', headers: o.headers });
    expect(read.json().credentials).toHaveLength(1);
    expect(await messages(page)).toEqual([]);
    expect(await events(page)).toEqual([]);
    await context.close();
  });

  it('connect.js: where the popup is blocked, the page goes to the Connect page and comes back to the redirect URI', async () => {
    const created = await session('redirect-user', { allowedOrigins: [appOrigin], redirectUri: `${appOrigin}/back` });
    const { context, page } = await openFromApp(created, { blockPopups: true });
    await page.waitForURL(created.url);
    await page.locator('#provider-openai').getByLabel('API key').fill(OPENAI_KEY);
    await page.locator('#provider-openai').getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    const landed = new URL(page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(`${appOrigin}/back`);
    expect(Object.fromEntries(landed.searchParams)).toEqual({ status: 'success', sessionId: created.id, provider: 'openai' });
    await context.close();
  });
});
