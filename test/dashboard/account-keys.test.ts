/**
 * Developer → Account API Keys over app.inject: a key generated on the page opens the management API,
 * is shown once, is revoked behind a confirmation with effect on the very next call; refused forms keep
 * their values with the error beside the field; CSRF and other accounts' users change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { createServer } from '../../src/services/servers/servers.js';
import { csrfOf, type DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const KEYS = '/dashboard/developer/api-keys';
const KEY_IN_PAGE = /value="(service_acct_[0-9a-f]{72})"/;

describe.each(ENGINES)('Developer → Account API Keys on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  /** A new account with its signed-in user, its id, and a server (made by the services) to call the API with. */
  async function newUser() {
    const { client, email, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Keys');
    const { serverKey } = await createServer(t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    return { client, email, accountId, serverKey };
  }
  const callApi = (accountKey: string, serverKey: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: '/v1/end-users', headers: { authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey, ...headers } });
  const generate = (client: DashboardClient, fields: Record<string, string>) =>
    client.submit(KEYS, KEYS, { environment: 'production', expiresAt: '', ...fields });

  it('finds the page by its words, generates a key shown once that works, and revokes it with effect on the very next call', async () => {
    const { client, email, accountId, serverKey } = await newUser();
    const developer = await client.get('/dashboard/developer');
    expect(developer.statusCode).toBe(200);
    expect(developer.body).toContain(`<a href="${KEYS}">Account API Keys</a>`);
    expect(developer.body).toContain('<a href="/openapi.json">API reference</a>');

    const empty = await client.get(KEYS);
    expect(empty.statusCode).toBe(200);
    expect(empty.headers['content-security-policy']).toContain("script-src 'self'");
    expect(empty.body).not.toMatch(/<script>|\son[a-z]+="/);
    expect(empty.body).toContain('<label for="field-label">Label</label>');
    expect(empty.body).toContain('<button type="submit">Generate Key</button>');
    expect(visible(empty.body)).toContain('No account API keys yet. Generate one to call the management API.');

    const created = await generate(client, { label: 'Billing backend', environment: 'staging' });
    expect(created.statusCode).toBe(200);
    const key = KEY_IN_PAGE.exec(created.body)?.[1];
    expect(key).toBeDefined();
    expect(visible(created.body)).toContain('New account API key');
    expect(created.body).toContain('data-copy="shown-once-value">Copy</button>');
    expect(visible(created.body)).toContain('Copy it now: it will not be shown again.');
    expect((await callApi(key!, serverKey)).statusCode).toBe(200);

    const hint = `service_acct_…${key!.slice(-4)}`;
    const list = await client.get(KEYS);
    expect(list.body).not.toContain(key!);
    expect(list.body).not.toContain(key!.slice(13, 40));
    const row = visible(list.body);
    expect(row).toContain(`Billing backend Staging ${hint} ${email}`);
    expect(row).toContain('Active');
    expect(row).not.toContain('No account API keys yet');
    const [view] = await listAccountKeys(t.ctx, accountId);
    expect(view).toMatchObject({ label: 'Billing backend', environment: 'staging', createdBy: expect.stringMatching(/^user:/), expiresAt: null });

    const revokeUrl = `${KEYS}/${view!.id}/revoke`;
    expect(list.body).toContain(
      `<form method="get" action="${revokeUrl}"><button type="submit" class="danger" aria-label="Revoke Billing backend">Revoke</button></form>`,
    );
    const confirm = await client.get(revokeUrl);
    expect(confirm.statusCode).toBe(200);
    expect(visible(confirm.body)).toContain(`Revoke key Billing backend (${hint})? Backends using it stop working at once.`);
    expect(confirm.body).toContain(`<a href="${KEYS}">Cancel</a>`);
    expect((await callApi(key!, serverKey)).statusCode).toBe(200);

    const revoked = await client.post(revokeUrl, { csrf: csrfOf(confirm.body) });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`${KEYS}?notice=key-revoked`);
    expectProblem(await callApi(key!, serverKey), 401, 'account_key_revoked');

    const after = await client.get(revoked.headers.location as string);
    expect(after.body).toContain('<p class="notice" role="status">The key was revoked. Backends still using it are refused from now on.</p>');
    expect(visible(after.body)).toContain('Revoked');
    expect(after.body).not.toContain(`action="${revokeUrl}"`);
    // A second visit to the confirmation, or a second POST, says it was revoked already.
    for (const again of [await client.get(revokeUrl), await client.post(revokeUrl, { csrf: csrfOf(after.body) })]) {
      expect(again.statusCode).toBe(303);
      expect(again.headers.location).toBe(`${KEYS}?notice=key-already-revoked`);
    }
    expect((await client.get(`${KEYS}?notice=${encodeURIComponent('<b>forged</b>')}`)).body).not.toContain('forged');
  });

  it('keeps an expiry typed as UTC, shows it, and refuses one in the past beside the field', async () => {
    const { client, accountId } = await newUser();
    const future = new Date(t.clock.now().getTime() + 3 * 86_400_000).toISOString().slice(0, 16);
    expect((await generate(client, { label: 'Expiring', expiresAt: future })).statusCode).toBe(200);
    const [view] = await listAccountKeys(t.ctx, accountId);
    expect(view!.expiresAt).toBe(`${future}:00.000Z`);
    expect(visible((await client.get(KEYS)).body)).toContain(`${future.replace('T', ' ')} UTC`);

    const past = new Date(t.clock.now().getTime() - 60_000).toISOString().slice(0, 16);
    const refused = await generate(client, { label: 'Too late', expiresAt: past });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('<p class="error" id="field-expiresAt-error">The expiry must be in the future.</p>');
    expect(refused.body).toContain('value="Too late"');
    const garbled = await generate(client, { label: 'Garbled', expiresAt: 'next tuesday' });
    expect(garbled.statusCode).toBe(422);
    expect(garbled.body).toContain('id="field-expiresAt-error">Enter a date and time, such as 2030-01-31T09:00 (UTC).</p>');
    expect(await listAccountKeys(t.ctx, accountId)).toHaveLength(1);

    // Sessions last 12 hours: a key that expires in a minute shows the status without ending this one.
    const soon = new Date(t.clock.now().getTime() + 60_000).toISOString();
    await createAccountKey(t.ctx, { accountId, label: 'Short-lived', expiresAt: soon, actor: CLI_ACTOR });
    expect(visible((await client.get(KEYS)).body)).not.toContain('Expired');
    t.clock.advance(120);
    const expired = await client.get(KEYS);
    expect(visible(expired.body)).toMatch(/Short-lived Production service_acct_…[0-9a-f]{4} CLI.*Expired/);
    // Still counted towards the limit of 50, so it can still be revoked.
    expect(expired.body).toContain('aria-label="Revoke Short-lived">Revoke</button>');
  });

  it('refuses a missing label, a long one and an unknown environment beside their fields, creating nothing', async () => {
    const { client, accountId } = await newUser();
    const missing = await generate(client, { label: '   ', environment: 'development' });
    expect(missing.statusCode).toBe(422);
    expect(missing.body).toContain('<p class="error" id="field-label-error">Enter a label, such as the name of the backend that will use the key.</p>');
    expect(missing.body).toMatch(
      /<input id="field-label" name="label" type="text" value="" required maxlength="100" aria-invalid="true" aria-describedby="field-label-hint field-label-error">/,
    );
    expect(missing.body).toContain('<option value="development" selected>Development</option>');
    expect(missing.body).not.toMatch(KEY_IN_PAGE);

    const long = await generate(client, { label: 'x'.repeat(101) });
    expect(long.statusCode).toBe(422);
    expect(long.body).toContain('id="field-label-error">The label must be at most 100 characters.</p>');
    const environment = await generate(client, { label: 'Fine', environment: 'moon' });
    expect(environment.statusCode).toBe(422);
    expect(environment.body).toContain('id="field-environment-error">The environment must be one of production, staging, development, other.</p>');
    expect(await listAccountKeys(t.ctx, accountId)).toEqual([]);
  });

  it('escapes a label that looks like markup', async () => {
    const { client } = await newUser();
    const created = await generate(client, { label: '<img src=x onerror=alert(1)>' });
    expect(created.statusCode).toBe(200);
    expect(created.body).not.toContain('<img src=x');
    expect(created.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('shows the limit of 50 keys beside the form', async () => {
    const { client, accountId } = await newUser();
    for (let i = 0; i < 50; i++) await createAccountKey(t.ctx, { accountId, label: `k${i}`, actor: CLI_ACTOR });
    const list = await client.get(KEYS);
    expect(visible(list.body)).toContain(`k0 Production service_acct_…`);
    expect(visible(list.body)).toMatch(/service_acct_…[0-9a-f]{4} CLI\d{4}-/);
    const refused = await generate(client, { label: 'One too many' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain(
      '<p class="error summary" role="alert">This account has 50 keys that are not revoked, the most it may have. Revoke one you no longer use, then generate the new one.</p>',
    );
    expect(refused.body).toContain('value="One too many"');
    expect(await listAccountKeys(t.ctx, accountId)).toHaveLength(50);
  });

  it('refuses a POST without the CSRF token or with a wrong one: nothing created, nothing revoked', async () => {
    const { client, accountId, serverKey } = await newUser();
    const { keyId, key } = await createAccountKey(t.ctx, { accountId, label: 'Kept', actor: CLI_ACTOR });
    for (const csrf of [undefined, 'forged', `${csrfOf((await client.get(KEYS)).body).slice(0, -1)}x`]) {
      const fields: Record<string, string> = csrf === undefined ? {} : { csrf };
      const create = await client.post(KEYS, { ...fields, label: 'Forged', environment: 'production' });
      expect(create.statusCode).toBe(403);
      expect(create.body).not.toMatch(KEY_IN_PAGE);
      const revoke = await client.post(`${KEYS}/${keyId}/revoke`, fields);
      expect(revoke.statusCode).toBe(403);
    }
    const keys = await listAccountKeys(t.ctx, accountId);
    expect(keys.map((k) => [k.label, k.revokedAt])).toEqual([['Kept', null]]);
    expect((await callApi(key, serverKey)).statusCode).toBe(200);
  });

  it("keeps accounts apart: another user sees none of the first account's keys and cannot reach or revoke them", async () => {
    const first = await newUser();
    const created = await generate(first.client, { label: 'First account secret backend' });
    const key = KEY_IN_PAGE.exec(created.body)![1]!;
    const [view] = await listAccountKeys(t.ctx, first.accountId);
    const second = await newUser();
    const list = await second.client.get(KEYS);
    expect(list.body).not.toContain('First account secret backend');
    expect(list.body).not.toContain(view!.hint);
    expect(list.body).not.toContain(view!.id);

    const url = `${KEYS}/${view!.id}/revoke`;
    const get = await second.client.get(url);
    expect(get.statusCode).toBe(404);
    expect(visible(get.body)).toContain('This page does not exist, or it belongs to another account.');
    expect(get.body).not.toContain('First account secret backend');
    const post = await second.client.post(url, { csrf: csrfOf(list.body) });
    expect(post.statusCode).toBe(404);
    expect((await listAccountKeys(t.ctx, first.accountId))[0]!.revokedAt).toBeNull();
    expect((await callApi(key, first.serverKey)).statusCode).toBe(200);
    expect((await second.client.get(`${KEYS}/key_000000000000ffffffffffffffff/revoke`)).statusCode).toBe(404);
  });

  it('shows the browser-exposure warning once the key was sent with an Origin header', async () => {
    const { client, accountId, serverKey } = await newUser();
    const created = await generate(client, { label: 'Leaky' });
    const key = KEY_IN_PAGE.exec(created.body)![1]!;
    expect(visible((await client.get(KEYS)).body)).not.toContain('Used from a browser');
    expectProblem(await callApi(key, serverKey, { origin: 'https://shop.example' }), 403, 'browser_access_forbidden');
    const [view] = await listAccountKeys(t.ctx, accountId);
    expect(view!.browserExposure?.origin).toBe('https://shop.example');
    const at = view!.browserExposure!.at;
    const page = visible((await client.get(KEYS)).body);
    expect(page).toContain(
      `Leaky: Used from a browser at https://shop.example on ${at.slice(0, 10)} ${at.slice(11, 16)} UTC — revoke it and generate a new one.`,
    );
  });

  it('revokes a key once when revocations race: one audit event, and every caller told the same time', async () => {
    const { accountId } = await newUser();
    for (let round = 0; round < 5; round++) {
      const { keyId } = await createAccountKey(t.ctx, { accountId, label: `Raced ${round}`, actor: CLI_ACTOR });
      // Revoked by the CLI, the dashboard and the CLI again at once: on PostgreSQL the transactions
      // read the key as live together before their UPDATEs line up on its row.
      const results = await Promise.all([CLI_ACTOR, 'user:a', CLI_ACTOR, 'user:b'].map((actor) => revokeAccountKey(t.ctx, keyId, actor)));
      const [view] = (await listAccountKeys(t.ctx, accountId)).filter((k) => k.id === keyId);
      expect(new Set(results.map((r) => r.revokedAt))).toEqual(new Set([view!.revokedAt]));
      const events = await t.ctx.store.db
        .selectFrom('audit_events')
        .select('actor')
        .where('target_id', '=', keyId)
        .where('action', '=', 'account_key.revoked')
        .execute();
      expect(events.map((e) => e.actor)).toEqual([view!.revokedBy]);
    }
  });

  it('sends a visitor without a session to sign in', async () => {
    const response = await t.app.inject({ method: 'GET', url: KEYS });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/sign-in');
  });
});
