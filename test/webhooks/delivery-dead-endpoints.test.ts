/**
 * A dead endpoint (connection refused) and one that never answers ('hang') hold only their own few
 * slots (CONTRACT 7, issue 10 item 3): with the dispatcher running and requests held open at the
 * endpoint, the API's member read and a hosted form's POST complete, and another server's endpoint
 * gets its event. "No request waits on delivery" is shown by the order of things, not by a timing:
 * all of it happens while the held requests are still open. The bounds on requests in flight, per
 * endpoint and per node, hold throughout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutbound } from '../../src/outbound/outbound-http.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { WebhookDispatcher } from '../../src/services/webhooks/webhook-delivery.js';
import { addWebhookEndpoint, listDeliveries, removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { readEndUser } from '../helpers/form-session.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { createTenant, keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { REFUSED_ENDPOINT_URL, until } from '../helpers/webhook-delivery.js';
import { delivered, type Subscriber, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';

const PER_ENDPOINT = 2;
const POLL_MS = 20;
const API_KEY = 'sk-proj-DEADENDPOINTSabcdefghijklmnopqrs';

describe.each(ENGINES)('dead webhook endpoints on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  beforeAll(async () => {
    ({ t, tenant, headers } = await startWithTenant(engine, { webhookLimits: { perEndpoint: PER_ENDPOINT, maxInFlight: 8, pollMs: POLL_MS } }));
  });
  afterAll(() => t.close());

  /** Receivers that never answer, each an endpoint of the server, and what to do with them after. */
  async function hanging(serverId: string, count: number): Promise<Subscriber[]> {
    const made: Subscriber[] = [];
    for (let i = 0; i < count; i += 1) {
      const s = await subscribe(t, serverId);
      s.receiver.fallback = 'hang';
      made.push(s);
    }
    return made;
  }
  async function remove(subscribers: Subscriber[]): Promise<void> {
    for (const s of subscribers) {
      await removeWebhookEndpoint(t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
      await s.close();
    }
  }

  it("do not hold up the member read, a hosted form, or another server's delivery", async () => {
    await connectStatic(t.app, headers, { externalUserId: 'u_reader', values: { apiKey: API_KEY } });
    const [hang] = await hanging(tenant.serverId, 1);
    const refused = await addWebhookEndpoint(t.ctx, { serverId: tenant.serverId, url: REFUSED_ENDPOINT_URL, actor: CLI_ACTOR });
    const other = await createTenant(t.ctx);
    const live = await subscribe(t, other.serverId);
    try {
      for (let i = 0; i < 4; i += 1) await writeEvent(t, tenant.serverId, `u_dead_${i}`);
      t.webhooks.start();
      await until(() => hang!.receiver.hanging === PER_ENDPOINT, 'the endpoint that never answers to hold requests open');

      // While those requests are open: the API answers, a form completes (writing more messages for the
      // dead endpoints), and another server's endpoint gets its event.
      const read = await readEndUser(t.app, headers, 'u_reader');
      expect(read.status).toBe(200);
      expect(read.body.credentials.map((c) => c.values)).toEqual([{ apiKey: API_KEY }]);
      await connectStatic(t.app, headers, { externalUserId: 'u_during', values: { apiKey: API_KEY } });
      const { sessionId } = await connectStatic(t.app, keys(other), { externalUserId: 'u_elsewhere', values: { apiKey: API_KEY } });
      const [received] = await live.receiver.waitFor(1);
      expect(delivered(t, live.secret, received!)).toMatchObject({ type: 'credential.connected', data: { externalUserId: 'u_elsewhere', sessionId } });
      // Every connection refused was tried, each message once (the clock stands still: none is due again).
      await until(async () => {
        const { deliveries } = await listDeliveries(t.ctx, { webhookId: refused.webhookId });
        return deliveries.length === 5 && deliveries.every((d) => d.attempts.length === 1);
      }, 'each message to the refused endpoint to be tried');
      const { deliveries } = await listDeliveries(t.ctx, { webhookId: refused.webhookId });
      expect(new Set(deliveries.map((d) => `${d.status} ${d.attempts[0]!.error}`))).toEqual(new Set(['pending network: the endpoint could not be reached']));

      // Still open, and no request beyond the endpoint's bound ever reached it: held requests never
      // end, so every request it got is still held.
      await sleep(10 * POLL_MS);
      expect(hang!.receiver.hanging).toBe(PER_ENDPOINT);
      expect(hang!.receiver.received).toHaveLength(PER_ENDPOINT);
    } finally {
      await t.webhooks.stop();
      await removeWebhookEndpoint(t.ctx, { webhookId: refused.webhookId, actor: CLI_ACTOR });
      await remove([hang!, live]);
    }
  });

  it("get one request at a time, not the endpoint's bound, once one of their requests timed out", async () => {
    const timeoutMs = 500;
    const [slow] = await hanging(tenant.serverId, 1);
    const outbound = createOutbound({ allowPrivateUrls: true, timeoutMs });
    const dispatcher = new WebhookDispatcher(t.ctx, outbound, { perEndpoint: PER_ENDPOINT, pollMs: POLL_MS });
    try {
      for (let i = 0; i < PER_ENDPOINT + 2; i += 1) await writeEvent(t, tenant.serverId, `u_slow_${i}`);
      dispatcher.start();
      // Before any timeout, the endpoint gets its bound at once.
      await until(() => slow!.receiver.hanging === PER_ENDPOINT, 'the first requests to be held open together');
      // Both time out; the next two go one after the other: the later one is sent only once the earlier one timed out.
      const [, , third, fourth] = await slow!.receiver.waitFor(PER_ENDPOINT + 2);
      expect(fourth!.receivedAt - third!.receivedAt).toBeGreaterThanOrEqual(timeoutMs - 50);
    } finally {
      await dispatcher.stop();
      await outbound.close();
      await remove([slow!]);
    }
  });

  it("keep at most the node's bound of requests in flight, however many endpoints hang", async () => {
    const maxInFlight = 3;
    const endpoints = await hanging(tenant.serverId, 3);
    const outbound = createOutbound({ allowPrivateUrls: true, timeoutMs: 10_000 });
    const dispatcher = new WebhookDispatcher(t.ctx, outbound, { maxInFlight, perEndpoint: PER_ENDPOINT, pollMs: POLL_MS });
    const open = () => endpoints.reduce((sum, s) => sum + s.receiver.hanging, 0);
    try {
      for (let i = 0; i < 3; i += 1) await writeEvent(t, tenant.serverId, `u_bound_${i}`);
      dispatcher.start();
      await until(() => open() === maxInFlight, 'the node to fill its slots');
      await sleep(10 * POLL_MS);
      expect(open()).toBe(maxInFlight);
      expect(endpoints.reduce((sum, s) => sum + s.receiver.received.length, 0)).toBe(maxInFlight);
      for (const s of endpoints) expect(s.receiver.received.length).toBeLessThanOrEqual(PER_ENDPOINT);
    } finally {
      await dispatcher.stop();
      await outbound.close();
      await remove(endpoints);
    }
  });
});
