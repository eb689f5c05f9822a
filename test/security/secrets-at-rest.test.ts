/**
 * After a full run, no key, credential value, client secret, form token or webhook signing secret may
 * be found in plaintext in the database (the SQLite file and its write-ahead log, or every PostgreSQL
 * row) or in the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { rotateServerKey } from '../../src/services/servers/servers.js';
import { addWebhookEndpoint, rotateWebhookSecret } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic, formPath, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { leaked, sqliteFilesText, storedRowsText } from '../helpers/secret-scan.js';
import { createTenant, keys, startTestApp, type TestApp } from '../helpers/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const STATIC_SECRET = 'sk-proj-SECRETVALUEabcdefghijklmnopqrstu';
const REPLACED_SECRET = 'sk-proj-REPLACEDVALUEabcdefghijklmnop';
const CLIENT_SECRET = 'github-client-secret-DO-NOT-LEAK-42';

describe.each(ENGINES)('secrets at rest on %s', (engine) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const secrets: string[] = [STATIC_SECRET, REPLACED_SECRET, CLIENT_SECRET];

  beforeAll(async () => {
    t = await startTestApp(engine);
    const tenant = await createTenant(t.ctx, { providers: ['openai', 'anthropic'] });
    await enableProvider(t.ctx, { serverId: tenant.serverId, slug: 'github', clientId: 'gh-client', clientSecret: CLIENT_SECRET, actor: CLI_ACTOR });
    const rotated = await rotateServerKey(t.ctx, tenant.serverId, 3600, CLI_ACTOR);
    secrets.push(tenant.accountKey, tenant.serverKey, rotated.serverKey);
    const headers = keys(tenant);
    // A webhook endpoint whose secret was rotated with a grace period: two secrets live, both signing.
    receiver = await startWebhookReceiver();
    const { webhookId, secret } = await addWebhookEndpoint(t.ctx, { serverId: tenant.serverId, url: receiver.url, actor: CLI_ACTOR });
    const next = await rotateWebhookSecret(t.ctx, { webhookId, graceSeconds: 3600, actor: CLI_ACTOR });
    // The key material is the part after whsec_: it must not be found without its prefix either.
    for (const whsec of [secret, next.secret]) secrets.push(whsec, whsec.slice('whsec_'.length));

    await connectStatic(t.app, headers, { externalUserId: 'u_1', values: { apiKey: REPLACED_SECRET } });
    await connectStatic(t.app, headers, { externalUserId: 'u_1', values: { apiKey: STATIC_SECRET } });
    await connectStatic(t.app, headers, { provider: 'anthropic', externalUserId: 'u_2', values: { apiKey: 'sk-ant-ERASEDVALUEabcdefghijklmnop' } });
    secrets.push('sk-ant-ERASEDVALUEabcdefghijklmnop');

    // A form that is only opened, and one created with an Idempotency-Key: both tokens must stay unknown.
    for (const extra of [{}, { 'idempotency-key': 'order-1' }]) {
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/credentials/static/openai/connect',
        headers: { ...headers, ...extra },
        payload: { externalUserId: 'u_3' },
      });
      const url = created.json().url as string;
      secrets.push(formPath(url).slice('/connect/'.length));
      const visit = await openHostedForm(t.app, url);
      await postHostedForm(t.app, visit, { apiKey: 'bad' });
    }

    const read = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_1', headers });
    expect(read.json().credentials[0].values.apiKey).toBe(STATIC_SECRET);
    await t.app.inject({ method: 'GET', url: '/v1/end-users', headers });
    await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_2', headers });
    // Failed authentications log too.
    await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: { ...headers, origin: 'https://app.example' } });
    await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: { authorization: `Bearer ${tenant.serverKey}`, 'x-service-key': tenant.accountKey } });
    // The events of all that, signed with both secrets and delivered.
    await t.webhooks.drain();
    expect(receiver.received.length).toBeGreaterThan(3);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('keeps them out of every stored row', async () => {
    expect(leaked(await storedRowsText(t.ctx), secrets)).toEqual([]);
    // The webhook secrets are stored, sealed.
    expect(await t.ctx.store.db.selectFrom('webhook_secrets').select('id').execute()).toHaveLength(2);
  });

  // Only SQLite has a file of its own to read; on PostgreSQL the rows above are the whole store.
  if (engine === 'sqlite')
    it('keeps them out of the SQLite file and its write-ahead log', () => {
      const files = sqliteFilesText(t.database.file!);
      expect(files.reduce((n, text) => n + text.length, 0)).toBeGreaterThan(0);
      for (const text of files) expect(leaked(text, secrets)).toEqual([]);
      // The check can see plaintext when it is there: ids and labels are stored as they are.
      expect(files.some((text) => text.includes('backend'))).toBe(true);
    });

  it('keeps them out of the logs', () => {
    expect(t.logs.length).toBeGreaterThan(10);
    const logs = t.logs.join('\n');
    expect(leaked(logs, secrets)).toEqual([]);
    expect(logs).not.toContain('u_1');
  });
});
