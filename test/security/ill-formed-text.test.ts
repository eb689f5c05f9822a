/**
 * Free text from the dashboard that reaches storage must be well-formed (issue 8 item 5). A browser
 * never sends a lone surrogate in a form, but the dashboard's routes read JSON bodies too, and JSON
 * can carry `\ud800`; stored, it would come back as U+FFFD. Each refusal names the field and stores
 * nothing. (The CLI cannot receive one: Node decodes argv as UTF-8, so invalid bytes arrive as U+FFFD.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { type DashboardClient, hiddenFieldsOf, signUpUser, userByEmail, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)('ill-formed text from the dashboard on %s', (engine) => {
  let t: TestApp, client: DashboardClient, serverId: string;
  beforeAll(async () => {
    t = await startTestApp(engine);
    const email = `ill-formed-${engine}@example.test`;
    client = await signUpUser(t.app, { email });
    const { account_id } = await userByEmail(t.ctx.store.db, email);
    ({ serverId } = await createServer(t.ctx, { accountId: account_id, name: 'Odd', mode: 'business', actor: CLI_ACTOR }));
  });
  afterAll(() => t.close());

  /** Posts the page's form as JSON, with its hidden fields (CSRF token, one-time nonce). */
  async function postJson(pageUrl: string, action: string, fields: Record<string, string>) {
    const page = await client.get(pageUrl);
    return t.app.inject({
      method: 'POST',
      url: action,
      headers: { cookie: client.cookieHeader },
      payload: { ...hiddenFieldsOf(page.body, action), ...fields },
    });
  }

  it.each([
    ['a key label', '/dashboard/developer/api-keys', { label: 'backend \ud800', environment: 'production', expiresAt: '' }, /label is not valid text/],
    ['a server name', '/dashboard/servers', { name: 'Production \udc00', mode: 'business' }, /server name is not valid text/],
  ])('refuses %s holding a lone surrogate, naming it, and stores nothing', async (_name, url, fields, message) => {
    const before = await snapshotTables(t.ctx);
    const response = await postJson(url, url, fields);
    expect(response.statusCode, response.body.slice(0, 300)).toBe(422);
    expect(visible(response.body)).toMatch(message);
    const after = await snapshotTables(t.ctx);
    // A refused creation may touch only the one-time form nonces; no key, server or audit event appears.
    for (const table of ['account_keys', 'servers', 'server_keys', 'audit_events']) expect(after[table]).toEqual(before[table]);
  });

  it('refuses a custom provider whose field label holds a lone surrogate, naming the field', async () => {
    const url = `/dashboard/servers/${serverId}/providers`;
    const before = await snapshotTables(t.ctx);
    const response = await postJson(url, `${url}/custom-static`, { staticSlug: 'oddity', staticName: 'Oddity', fields: 'apiKey:API \ud800 key:secret' });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(422);
    expect(visible(response.body)).toMatch(/fields\[0\]\.label is not valid text/);
    const after = await snapshotTables(t.ctx);
    for (const table of ['custom_providers', 'server_providers', 'audit_events']) expect(after[table]).toEqual(before[table]);
  });

  it('takes the same text well-formed (a surrogate pair is one character)', async () => {
    const response = await postJson('/dashboard/developer/api-keys', '/dashboard/developer/api-keys', {
      label: 'backend \u{1F511}',
      environment: 'production',
      expiresAt: '',
    });
    expect(response.statusCode).toBe(200);
    const labels = await t.ctx.store.db.selectFrom('account_keys').select('label').execute();
    expect(labels.map((r) => r.label)).toContain('backend \u{1F511}');
  });
});
