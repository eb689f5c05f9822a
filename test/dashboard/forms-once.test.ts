/**
 * The dashboard forms that create something act once (issue 8, item 9): a reload of the page that
 * shows a key once, or a double click, makes nothing more. Counted in the database before and after.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSweeps, standardSweeps } from '../../src/services/retention/sweeps.js';
import { SESSION_LIFETIME_SECONDS } from '../../src/services/users/sessions.js';
import { LOCK_SECONDS } from '../../src/services/users/sign-in-attempts.js';
import { DashboardClient, hiddenFieldsOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const KEYS = '/dashboard/developer/api-keys';
const SERVERS = '/dashboard/servers';
const SHOWN_ONCE = /id="shown-once-value" class="secret" type="text" readonly value="(service_(?:acct|srv)_[^"]+)"/;
const ALREADY = 'This form was already submitted; nothing new was made.';

describe.each(ENGINES)('forms that create something, on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  const count = async (table: 'account_keys' | 'servers' | 'server_keys', column: 'account_id' | 'server_id', id: string) =>
    (await t.ctx.store.db.selectFrom(table).select('id').where(column, '=', id).execute()).length;

  /** The form's fields as the page rendered them (with its one-time nonce), plus what the user typed. */
  async function filledForm(client: DashboardClient, pageUrl: string, action: string, typed: Record<string, string>) {
    return { ...hiddenFieldsOf((await client.get(pageUrl)).body, action), ...typed };
  }

  function expectAlreadySubmitted(response: LightMyRequestResponse) {
    expect(response.statusCode).toBe(409);
    expect(visible(response.body)).toContain(ALREADY);
    expect(response.body).not.toMatch(SHOWN_ONCE);
  }

  it('Generate Key: a reload of the answer and a double click each make one key', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Once');
    const form = await filledForm(client, KEYS, KEYS, { label: 'Backend', environment: 'production', expiresAt: '' });
    expect(form.once).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const first = await client.post(KEYS, form);
    expect(first.statusCode).toBe(200);
    expect(first.body).toMatch(SHOWN_ONCE);
    expect(await count('account_keys', 'account_id', accountId)).toBe(1);
    // The browser's reload posts the very same form again.
    expectAlreadySubmitted(await client.post(KEYS, form));
    expect(await count('account_keys', 'account_id', accountId)).toBe(1);

    const twice = await filledForm(client, KEYS, KEYS, { label: 'Double click', environment: 'production', expiresAt: '' });
    const answers = await Promise.all([client.post(KEYS, twice), client.post(KEYS, twice)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await count('account_keys', 'account_id', accountId)).toBe(2);
  });

  it('Generate Key: a refused submission makes nothing and leaves its form usable once corrected', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Refused');
    const form = await filledForm(client, KEYS, KEYS, { label: 'Expired', environment: 'production', expiresAt: '2000-01-01T00:00' });
    expect((await client.post(KEYS, form)).statusCode).toBe(422);
    expect((await client.post(KEYS, { ...form, expiresAt: '' })).statusCode).toBe(200);
    expect(await count('account_keys', 'account_id', accountId)).toBe(1);
    // A form without its nonce (not one the dashboard rendered) makes nothing either.
    const { once: _, ...withoutNonce } = await filledForm(client, KEYS, KEYS, { label: 'No nonce', environment: 'production', expiresAt: '' });
    expect((await client.post(KEYS, withoutNonce)).statusCode).toBe(403);
    expect(await count('account_keys', 'account_id', accountId)).toBe(1);
  });

  it('Create server: a reload and a double click make one server with one key', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Servers');
    const form = await filledForm(client, SERVERS, SERVERS, { name: 'Production', mode: 'business' });
    const first = await client.post(SERVERS, form);
    expect(first.statusCode).toBe(200);
    expect(first.body).toMatch(SHOWN_ONCE);
    expectAlreadySubmitted(await client.post(SERVERS, form));
    expect(await count('servers', 'account_id', accountId)).toBe(1);

    const twice = await filledForm(client, SERVERS, SERVERS, { name: 'Staging', mode: 'personal' });
    const answers = await Promise.all([client.post(SERVERS, twice), client.post(SERVERS, twice)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const servers = await t.ctx.store.db.selectFrom('servers').select('id').where('account_id', '=', accountId).execute();
    expect(servers).toHaveLength(2);
    for (const server of servers) expect(await count('server_keys', 'server_id', server.id)).toBe(1);
  });

  it('Rotate key: a reload of the page with the new key makes no third key', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Rotate');
    await client.post(SERVERS, await filledForm(client, SERVERS, SERVERS, { name: 'Production', mode: 'business' }));
    const { id: serverId } = await t.ctx.store.db.selectFrom('servers').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    const overview = `${SERVERS}/${serverId}`;
    const form = await filledForm(client, overview, `${overview}/rotate-key`, { grace: '3600' });
    const rotated = await client.post(`${overview}/rotate-key`, form);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.body).toMatch(SHOWN_ONCE);
    expect(await count('server_keys', 'server_id', serverId)).toBe(2);
    expectAlreadySubmitted(await client.post(`${overview}/rotate-key`, form));
    const twice = await filledForm(client, overview, `${overview}/rotate-key`, { grace: '3600' });
    const answers = await Promise.all([client.post(`${overview}/rotate-key`, twice), client.post(`${overview}/rotate-key`, twice)]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(await count('server_keys', 'server_id', serverId)).toBe(3);
  });

  it('sweeps used nonces once their forms can no longer be sent, and sign-in counts whose window ended', async () => {
    const { client } = await newSignedInUser(t.app, t.ctx.store.db, 'Sweep');
    await client.post(KEYS, await filledForm(client, KEYS, KEYS, { label: 'Swept', environment: 'production', expiresAt: '' }));
    await new DashboardClient(t.app).submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'nobody@sweep.example', password: 'a guess' });
    const rows = async () => ({
      forms: (await t.ctx.store.db.selectFrom('dashboard_form_uses').select('nonce').execute()).length,
      attempts: (await t.ctx.store.db.selectFrom('sign_in_attempts').select('email_mac').execute()).length,
    });
    const before = await rows();
    expect(before.forms).toBeGreaterThan(0);
    expect(before.attempts).toBeGreaterThan(0);
    const sweeps = standardSweeps({ auditRetentionDays: null }).filter((s) => s.name === 'dashboard_form_uses' || s.name === 'sign_in_attempts');
    expect(await runSweeps(t.ctx, sweeps)).toEqual({ dashboard_form_uses: 0, sign_in_attempts: 0 });
    t.clock.advance(Math.max(SESSION_LIFETIME_SECONDS, LOCK_SECONDS) + 1);
    // Bounded batches: one row a statement, one statement a run, until none is left.
    let swept = 0;
    while ((await runSweeps(t.ctx, sweeps, { rows: 1, batches: 1 }))!.dashboard_form_uses === 1) swept += 1;
    expect(swept).toBe(before.forms);
    expect(await rows()).toEqual({ forms: 0, attempts: 0 });
  });
});
