/**
 * Who sends a message (CONTRACT 7: at least once, by exactly one node at a time): a removed endpoint
 * gets nothing more; a node that died mid-send leaves a lease that runs out, and another node sends
 * the message then, with the same webhook-id; two nodes on one PostgreSQL draining at the same moment
 * send each of many messages once, and share the work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { WEBHOOK_TIMEOUT_MS } from '../../src/services/webhooks/webhook-retry-policy.js';
import { ENGINES } from '../helpers/databases.js';
import { startSecondNode, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { deliveryOf, until } from '../helpers/webhook-delivery.js';
import { delivered, outboxRows, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';

/** How long a claim holds a message: the call's timeout, and the time to write its outcome. */
const LEASE_SECONDS = WEBHOOK_TIMEOUT_MS / 1000 + 5;

describe.each(ENGINES)('webhook senders on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  it('sends nothing more to a removed endpoint, and goes on with the others', async () => {
    const removed = await subscribe(t, tenant.serverId);
    const kept = await subscribe(t, tenant.serverId);
    try {
      removed.receiver.fallback = { status: 500 };
      const [retried] = await writeEvent(t, tenant.serverId, 'u_removed');
      expect(await t.webhooks.drain()).toBe(2);
      expect((await deliveryOf(t.ctx, removed.webhookId, retried!)).status).toBe('pending');

      await removeWebhookEndpoint(t.ctx, { webhookId: removed.webhookId, actor: CLI_ACTOR });
      expect((await outboxRows(t.ctx, 'u_removed')).map((r) => r.endpoint_id)).toEqual([kept.webhookId]);
      t.clock.advance(3600);
      await writeEvent(t, tenant.serverId, 'u_removed');
      expect(await t.webhooks.drain()).toBe(1);
      expect(removed.receiver.received).toHaveLength(1);
      expect(kept.receiver.received).toHaveLength(2);
    } finally {
      await removeWebhookEndpoint(t.ctx, { webhookId: kept.webhookId, actor: CLI_ACTOR });
      await removed.close();
      await kept.close();
    }
  });

  it('has another node send a message whose sender died mid-send, once the lease has run out', async () => {
    const s = await subscribe(t, tenant.serverId);
    s.receiver.script('hang');
    const dying = await startSecondNode(t);
    try {
      const [messageId] = await writeEvent(t, tenant.serverId, 'u_lease');
      // The second node claims and sends, and gets no answer; then it is silent, as if killed (a node
      // that stops gives its messages back: closing it here would not be a death).
      expect(await dying.webhooks.round()).toBe(1);
      await until(() => s.receiver.hanging === 1, 'the first node to send');

      const pending = await deliveryOf(t.ctx, s.webhookId, messageId!);
      expect(pending).toMatchObject({ status: 'pending', attempts: [] });
      expect(await t.webhooks.drain()).toBe(0);
      t.clock.advance(LEASE_SECONDS - 0.005);
      expect(await t.webhooks.drain()).toBe(0);
      t.clock.advance(0.01);
      expect(await t.webhooks.drain()).toBe(1);

      const [first, second] = s.receiver.received;
      expect(s.receiver.received).toHaveLength(2);
      expect(first!.headers['webhook-id']).toBe(messageId);
      expect(delivered(t, s.secret, second!).messageId).toBe(messageId);
      const done = await deliveryOf(t.ctx, s.webhookId, messageId!);
      expect(done).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 204 }] });
    } finally {
      await dying.close();
      await removeWebhookEndpoint(t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
      await s.close();
    }
  });

  it('has a node that stops give back the message it was sending, due at once for another node', async () => {
    const s = await subscribe(t, tenant.serverId);
    s.receiver.script('hang');
    const stopping = await startSecondNode(t);
    try {
      const [messageId] = await writeEvent(t, tenant.serverId, 'u_stopping');
      expect(await stopping.webhooks.round()).toBe(1);
      await until(() => s.receiver.hanging === 1, 'the stopping node to send');
      await stopping.close();
      // No attempt was recorded (nobody knows what the endpoint made of it), and no lease waits to run out.
      expect(await deliveryOf(t.ctx, s.webhookId, messageId!)).toMatchObject({ status: 'pending', attempts: [] });
      expect(await t.webhooks.drain()).toBe(1);
      expect(s.receiver.received.map((r) => r.headers['webhook-id'])).toEqual([messageId, messageId]);
      expect(await deliveryOf(t.ctx, s.webhookId, messageId!)).toMatchObject({ status: 'delivered', attempts: [{ statusCode: 204 }] });
    } finally {
      await removeWebhookEndpoint(t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
      await s.close();
    }
  });

  // SQLite is one file on one machine; several nodes share a database only on PostgreSQL.
  if (engine === 'postgres') {
    it('sends each of 200 messages once when two nodes drain at the same moment', { timeout: 60_000 }, async () => {
      const s = await subscribe(t, tenant.serverId);
      const second = await startSecondNode(t);
      try {
        const written: string[] = [];
        for (let i = 0; i < 200; i += 1) written.push(...(await writeEvent(t, tenant.serverId, `u_many_${i}`)));
        const [byFirst, bySecond] = await Promise.all([t.webhooks.drain(), second.webhooks.drain()]);

        const ids = s.receiver.received.map((r) => String(r.headers['webhook-id']));
        expect(ids).toHaveLength(200);
        expect(new Set(ids)).toEqual(new Set(written));
        expect(byFirst + bySecond).toBe(200);
        expect(byFirst).toBeGreaterThan(0);
        expect(bySecond).toBeGreaterThan(0);
        const rows = await outboxRows(t.ctx);
        expect(rows.filter((r) => written.includes(r.id)).every((r) => r.status === 'delivered' && r.lease_holder === null)).toBe(true);
        const attempts = await t.ctx.store.webhooks.attemptsOf(written);
        expect(attempts).toHaveLength(200);
      } finally {
        await second.close();
        await removeWebhookEndpoint(t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
        await s.close();
      }
    });
  }
});
