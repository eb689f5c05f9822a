/**
 * One account's endpoints that never answer do not delay another account's webhooks (issue 17 item
 * 4). Account X has four servers of ten endpoints each, on four real receivers that accept every
 * request and never answer; one event per server makes 40 messages. With the dispatcher's default
 * bounds (32 attempts a node, 4 an endpoint) and the real 10 s timeout, an event for account Y must
 * reach Y's endpoint while X's requests are still held, well before any of them times out. And
 * claiming is fair too: when X's 40 messages are older than Y's and all due at once, the first round
 * already takes Y's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOutbound } from '../../src/outbound/outbound-http.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { DEFAULT_DISPATCHER_LIMITS, WebhookDispatcher } from '../../src/services/webhooks/webhook-delivery.js';
import { addWebhookEndpoint, removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { WEBHOOK_TIMEOUT_MS } from '../../src/services/webhooks/webhook-retry-policy.js';
import { ENGINES } from '../helpers/databases.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/webhook-delivery.js';
import { delivered, type Subscriber, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SERVERS = 4;
const ENDPOINTS_PER_SERVER = 10;
/**
 * How long Y's delivery may take: far below the 10 s timeout X's requests wait for, far above what
 * a delivery takes on a busy 2-core machine (a poll of 500 ms, a claim, a local request).
 */
const PROMPT_MS = 3000;

describe.each(ENGINES)("one account's hanging endpoints and another account's webhooks on %s", (engine) => {
  let t: TestApp;
  /** X's hanging receivers and endpoints, Y's subscriber: closed and removed after each test. */
  let hanging: WebhookReceiver[] = [];
  let endpoints: string[] = [];
  let live: Subscriber | undefined;
  beforeAll(async () => {
    // The dispatcher's defaults, as `keyward serve` runs it.
    t = await startTestApp(engine);
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000);
  });
  afterEach(async () => {
    await t.webhooks.stop();
    for (const webhookId of endpoints) await removeWebhookEndpoint(t.ctx, { webhookId, actor: CLI_ACTOR });
    for (const receiver of hanging) await receiver.close();
    await live?.close();
    hanging = [];
    endpoints = [];
    live = undefined;
  });
  afterAll(() => t.close());

  /** Account X: four servers of ten endpoints on four receivers that never answer, and one event per server (40 messages). */
  async function deadAccount(): Promise<void> {
    const x = await createTenant(t.ctx);
    for (let s = 0; s < SERVERS; s += 1) {
      const serverId =
        s === 0 ? x.serverId : (await createServer(t.ctx, { accountId: x.accountId, name: `X ${s}`, mode: 'business', actor: CLI_ACTOR })).serverId;
      const receiver = await startWebhookReceiver('hang');
      hanging.push(receiver);
      for (let i = 0; i < ENDPOINTS_PER_SERVER; i += 1) {
        endpoints.push((await addWebhookEndpoint(t.ctx, { serverId, url: `${receiver.url}/${i}`, actor: CLI_ACTOR })).webhookId);
      }
      await writeEvent(t, serverId, `u_x_${s}`);
    }
  }
  const held = () => hanging.reduce((sum, r) => sum + r.hanging, 0);

  it("delivers Y's event promptly while X's 40 endpoints hold their requests open", async () => {
    await deadAccount();
    const y = await createTenant(t.ctx);
    live = await subscribe(t, y.serverId);
    t.webhooks.start();
    // X's requests arrive and are held; a few polls later the dispatcher has taken every slot it gives X.
    await until(() => held() >= DEFAULT_DISPATCHER_LIMITS.perEndpoint, "X's requests to be held open");
    await new Promise((resolve) => setTimeout(resolve, 3 * DEFAULT_DISPATCHER_LIMITS.pollMs));
    const heldBefore = held();

    const written = Date.now();
    const [messageId] = await writeEvent(t, y.serverId, 'u_y');
    const [received] = await live.receiver.waitFor(1, 2 * WEBHOOK_TIMEOUT_MS);
    const waitedMs = received!.receivedAt - written;
    expect(delivered(t, live.secret, received!)).toMatchObject({ messageId, type: 'connect.failed', data: { externalUserId: 'u_y' } });
    expect(waitedMs, `Y's delivery took ${waitedMs} ms`).toBeLessThan(PROMPT_MS);
    // Y's went through beside X's, none of which had ended: X's were still held, none answered or timed out.
    expect(held()).toBeGreaterThanOrEqual(heldBefore);
    expect(held()).toBeLessThanOrEqual(DEFAULT_DISPATCHER_LIMITS.maxInFlight);
  });

  it("claims Y's message in the same round as X's older ones", async () => {
    await deadAccount();
    const y = await createTenant(t.ctx);
    live = await subscribe(t, y.serverId);
    const [messageId] = await writeEvent(t, y.serverId, 'u_y');
    // A dispatcher of its own, not started: one round, nothing polling behind it.
    const outbound = createOutbound({ allowPrivateUrls: true, timeoutMs: WEBHOOK_TIMEOUT_MS });
    const dispatcher = new WebhookDispatcher(t.ctx, outbound);
    try {
      const started = await dispatcher.round();
      // Claimed by that first round, not left for when X's attempts time out: leased to this node, or
      // already sent and settled (Y's endpoint answers at once, while the round claims on).
      const row = await t.ctx.store.db.selectFrom('webhook_messages').select(['lease_holder', 'status']).where('id', '=', messageId!).executeTakeFirstOrThrow();
      expect(row.lease_holder !== null || row.status === 'delivered', `the first round started ${started} attempts, none of them Y's`).toBe(true);
      const [received] = await live.receiver.waitFor(1, PROMPT_MS);
      expect(received!.headers['webhook-id']).toBe(messageId);
    } finally {
      await dispatcher.stop();
      await outbound.close();
    }
  });
});
