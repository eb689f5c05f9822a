/**
 * Signing secrets and the audit trail of endpoints (CONTRACT 7, issue 10 items 3 and 5), on both
 * engines: during a rotation's grace period every message carries a signature the standardwebhooks
 * package accepts for the old secret and one for the new; after it (or at once, with a grace of 0)
 * only the new secret verifies. Adding, rotating, resending and removing are in the audit trail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { removeWebhookEndpoint, resendMessage, rotateWebhookSecret } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { delivered, outboxRows, subscribe } from '../helpers/webhook-events.js';
import type { ReceivedWebhook } from '../helpers/webhook-receiver.js';

const API_KEY = 'sk-proj-SIGNINGabcdefghijklmnopqrstuvwx';

describe.each(ENGINES)('webhook secrets and audit on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  beforeAll(async () => {
    ({ t, tenant, headers } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  /** Connects the member through the hosted form and returns what the receiver got for it. */
  async function sendEvent(receiver: { received: ReceivedWebhook[] }, externalUserId: string): Promise<ReceivedWebhook> {
    const before = receiver.received.length;
    await connectStatic(t.app, headers, { externalUserId, values: { apiKey: API_KEY } });
    await t.webhooks.drain();
    expect(receiver.received).toHaveLength(before + 1);
    return receiver.received[before]!;
  }
  const signatures = (webhook: ReceivedWebhook) => String(webhook.headers['webhook-signature']).split(' ');

  it('signs with the old and the new secret during the grace period, then with the new one only', async () => {
    const endpoint = await subscribe(t, tenant.serverId);
    try {
      const { secret: next } = await rotateWebhookSecret(t.ctx, { webhookId: endpoint.webhookId, graceSeconds: 3600, actor: CLI_ACTOR });
      expect(next).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(next).not.toBe(endpoint.secret);

      const during = await sendEvent(endpoint.receiver, 'u_grace');
      expect(signatures(during)).toEqual([expect.stringMatching(/^v1,/), expect.stringMatching(/^v1,/)]);
      const byOld = delivered(t, endpoint.secret, during);
      expect(byOld).toMatchObject({ type: 'credential.connected', data: { externalUserId: 'u_grace' } });
      expect(delivered(t, next, during)).toEqual(byOld);

      t.clock.advance(3600);
      const after = await sendEvent(endpoint.receiver, 'u_after_grace');
      expect(signatures(after)).toHaveLength(1);
      expect(delivered(t, next, after)).toMatchObject({ data: { externalUserId: 'u_after_grace' } });
      expect(() => delivered(t, endpoint.secret, after)).toThrow();

      // A grace of 0 ends the current secret now.
      const { secret: third } = await rotateWebhookSecret(t.ctx, { webhookId: endpoint.webhookId, graceSeconds: 0, actor: CLI_ACTOR });
      const now = await sendEvent(endpoint.receiver, 'u_no_grace');
      expect(signatures(now)).toHaveLength(1);
      expect(delivered(t, third, now)).toMatchObject({ data: { externalUserId: 'u_no_grace' } });
      expect(() => delivered(t, next, now)).toThrow();
    } finally {
      await removeWebhookEndpoint(t.ctx, { webhookId: endpoint.webhookId, actor: CLI_ACTOR });
      await endpoint.close();
    }
  });

  it('records adding, rotating, resending and removing an endpoint in the audit trail, without the secret', async () => {
    const endpoint = await subscribe(t, tenant.serverId, ['credential.connected']);
    try {
      // A second between steps: the trail is in time order, and the test clock otherwise stands still.
      t.clock.advance(1);
      await rotateWebhookSecret(t.ctx, { webhookId: endpoint.webhookId, graceSeconds: 60, actor: CLI_ACTOR });
      // A 400 is not retried: the message fails, and can be resent.
      endpoint.receiver.script({ status: 400 });
      const refused = await sendEvent(endpoint.receiver, 'u_audit');
      const [message] = (await outboxRows(t.ctx, 'u_audit')).filter((r) => r.endpoint_id === endpoint.webhookId);
      expect(message).toMatchObject({ id: refused.headers['webhook-id'], status: 'failed' });
      t.clock.advance(1);
      await resendMessage(t.ctx, { messageId: message!.id, actor: CLI_ACTOR });
      await t.webhooks.drain();
      const resent = endpoint.receiver.received.at(-1)!;
      expect(resent.headers['webhook-id']).toBe(message!.id);
      expect(delivered(t, endpoint.secret, resent)).toEqual(delivered(t, endpoint.secret, refused));
      t.clock.advance(1);
      await removeWebhookEndpoint(t.ctx, { webhookId: endpoint.webhookId, actor: CLI_ACTOR });

      const trail = await t.ctx.store.db
        .selectFrom('audit_events')
        .select(['action', 'actor', 'target_id', 'server_id', 'detail'])
        .where('account_id', '=', tenant.accountId)
        .where('action', 'like', 'webhook.%')
        .where((eb) => eb.or([eb('target_id', '=', endpoint.webhookId), eb('target_id', '=', message!.id)]))
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      const entry = (action: string, targetId: string, detail: Record<string, unknown>) => ({
        action,
        actor: CLI_ACTOR,
        target_id: targetId,
        server_id: tenant.serverId,
        detail: expect.objectContaining(detail),
      });
      expect(trail.map((e) => ({ ...e, detail: JSON.parse(e.detail) }))).toEqual([
        entry('webhook.added', endpoint.webhookId, { url: endpoint.receiver.url, events: ['credential.connected'] }),
        entry('webhook.secret_rotated', endpoint.webhookId, { graceSeconds: 60 }),
        entry('webhook.message_resent', message!.id, { webhookId: endpoint.webhookId }),
        entry('webhook.removed', endpoint.webhookId, { url: endpoint.receiver.url }),
      ]);
      expect(JSON.stringify(trail)).not.toContain(endpoint.secret.slice('whsec_'.length));
    } finally {
      await endpoint.close();
    }
  });
});
