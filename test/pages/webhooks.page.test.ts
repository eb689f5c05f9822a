/**
 * The Webhooks tab in a real browser, found by visible names (CONTRACT 6 and 7): "Servers" → the
 * server → "Webhooks" → "Add endpoint", the signing secret shown once with "Copy" (the clipboard
 * gets the secret that signs), a delivery the endpoint refused shown as failed with its attempt, and
 * "Resend", after which the message is delivered with the same webhook-id. The user signs up over
 * HTTP and the browser gets the session cookie: signing in by the page is dashboard.page.test.ts's.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/dashboard/auth-routes.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { newSignedInUser } from '../helpers/dashboard-session.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { messageStatus, writeAndDeliver } from '../helpers/webhook-history.js';
import { startWebhookReceiver, verifiedEvent, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SCREENSHOTS = 'test-output/screenshots';

describe.skipIf(!chromiumAvailable())('the Webhooks tab in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: WebhookReceiver;
  let serverId: string;
  /** Console errors of every page: a CSP violation or a script error shows up here. */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestApp('sqlite', { realClock: true });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    t.ctx.publicUrl = base;
    receiver = await startWebhookReceiver({ status: 400 });
    const user = await newSignedInUser(t.app, t.ctx.store.db, 'Browser');
    ({ serverId } = await createServer(t.ctx, { accountId: user.accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR }));
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1200, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await context.addCookies([{ name: SESSION_COOKIE, value: user.client.cookies.get(SESSION_COOKIE)!, url: base, httpOnly: true, sameSite: 'Lax' }]);
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) consoleErrors.push(message.text());
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/webhooks-${name}.png`, fullPage: true });

  let secret = '';

  it('adds an endpoint from Servers → the server → Webhooks, and shows its secret once with "Copy"', async () => {
    await page.goto(`${base}/dashboard`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Servers' }).click();
    await page.getByRole('link', { name: 'Production' }).click();
    await page.getByRole('navigation', { name: 'Server' }).getByRole('link', { name: 'Webhooks' }).click();
    await expect(page.getByText('No endpoints yet.').isVisible()).resolves.toBe(true);
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    // Every event is checked unless the user unticks some.
    await expect(page.getByRole('checkbox', { name: /credential\.connected/ }).isChecked()).resolves.toBe(true);
    await expect(page.getByRole('checkbox', { checked: true }).count()).resolves.toBe(6);
    await shot('add');
    await page.getByRole('button', { name: 'Add endpoint' }).click();

    secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await expect(page.getByText('it will not be shown again').isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shot('secret');

    await page.getByRole('navigation', { name: 'Server' }).getByRole('link', { name: 'Webhooks' }).click();
    await expect(page.getByRole('link', { name: receiver.url }).isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain(secret.slice('whsec_'.length));
  });

  it('shows a delivery the endpoint refused as failed, with its attempt, and resends it with "Resend"', async () => {
    // A change's event, sent by the node: the endpoint answers 400, so the message fails at once.
    const [messageId] = await writeAndDeliver(t, serverId);
    expect(await messageStatus(t, messageId!)).toBe('failed');
    await page.getByRole('link', { name: receiver.url }).click();
    const row = page.getByRole('row', { name: new RegExp(messageId!) });
    await expect(row.getByText('Failed', { exact: true }).isVisible()).resolves.toBe(true);
    await expect(row.getByText(/HTTP 400 · \d+ ms/).isVisible()).resolves.toBe(true);
    await shot('failed');

    receiver.fallback = { status: 204 };
    await row.getByRole('button', { name: 'Resend' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('The message is pending again');
    expect(await messageStatus(t, messageId!)).toBe('pending');
    await t.webhooks.drain();
    await page.reload();
    await expect(
      page
        .getByRole('row', { name: new RegExp(messageId!) })
        .getByText('Delivered', { exact: true })
        .isVisible(),
    ).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Resend' }).count()).resolves.toBe(0);
    await shot('resent');

    // Sent again with the same webhook-id, signed with the secret the page showed.
    const sent = receiver.received.filter((r) => r.headers['webhook-id'] === messageId);
    expect(sent).toHaveLength(2);
    expect(verifiedEvent(secret, sent[1]!).type).toBe('connect.failed');
    expect(consoleErrors).toEqual([]);
  });
});
