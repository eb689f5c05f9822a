/**
 * Claiming ahead (services/webhooks/claimed-ahead.ts): for an endpoint whose last call answered
 * quickly, a node leases up to perEndpoint messages beyond its free slots and holds them for those
 * slots. An endpoint that has not answered yet is claimed for its free slots only. Held messages are
 * the node's as those in flight are (another node gets none of them), and they are given back, with
 * no attempt recorded and due at once for any node: when the node stops, when they were held too
 * long, and when the endpoint stops answering quickly.
 *
 * Each node here is a dispatcher of its own (its own lease holder) on the test's database, driven by
 * round() with the receiver holding its requests open, so that what is leased can be read while
 * nothing settles. "Quickly" is a minute here (quickAnswerMs), so that a loaded machine's slow 204
 * cannot turn claiming ahead off under a test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOutbound, type OutboundHttp } from '../../src/outbound/outbound-http.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { HELD_MAX_MS, WebhookDispatcher } from '../../src/services/webhooks/webhook-delivery.js';
import { listDeliveries, removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/webhook-delivery.js';
import { type Subscriber, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';

const PER_ENDPOINT = 2;
const QUICK_ANSWER_MS = 60_000;

describe.each(ENGINES)('claiming ahead on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let outbound: OutboundHttp;
  let s: Subscriber;
  const nodes: WebhookDispatcher[] = [];
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
    outbound = createOutbound({ allowPrivateUrls: true, timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await outbound.close();
    await t.close();
  });

  /** A node of its own, polling never (the test calls round()), with `perEndpoint` slots an endpoint. */
  function node(perEndpoint = PER_ENDPOINT, calls = outbound): WebhookDispatcher {
    const made = new WebhookDispatcher(t.ctx, calls, { perEndpoint, pollMs: 3_600_000, quickAnswerMs: QUICK_ANSWER_MS });
    nodes.push(made);
    return made;
  }

  /** A fresh endpoint of the tenant's server. */
  async function endpoint(): Promise<Subscriber> {
    s = await subscribe(t, tenant.serverId);
    return s;
  }

  /** One event, delivered by `dispatcher` with the receiver's 204; then the receiver holds what comes. */
  async function answeredQuickly(dispatcher: WebhookDispatcher, subscriber: Subscriber): Promise<void> {
    subscriber.receiver.fallback = { status: 204 };
    await writeEvent(t, tenant.serverId, `u_quick_${subscriber.receiver.received.length}`);
    expect(await dispatcher.drain()).toBe(1);
    subscriber.receiver.fallback = 'hang';
  }

  async function events(count: number, prefix: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) ids.push(...(await writeEvent(t, tenant.serverId, `${prefix}_${i}`)));
    return ids;
  }

  /** How many of the messages are leased to some node. */
  async function leased(ids: string[]): Promise<number> {
    const rows = await t.ctx.store.db.selectFrom('webhook_messages').select('lease_holder').where('id', 'in', ids).execute();
    return rows.filter((r) => r.lease_holder !== null).length;
  }

  /** The webhook-ids the endpoint got after the first (the one answered quickly), in order. */
  function sentAfterFirst(subscriber: Subscriber): string[] {
    return subscriber.receiver.received.slice(1).map((r) => String(r.headers['webhook-id']));
  }

  async function attemptsOn(subscriber: Subscriber): Promise<number> {
    const { deliveries } = await listDeliveries(t.ctx, { webhookId: subscriber.webhookId });
    return deliveries.reduce((sum, d) => sum + d.attempts.length, 0);
  }

  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.stop();
    await removeWebhookEndpoint(t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
    await s.close();
  });

  it('claims only the free slots of an endpoint that has not answered yet', async () => {
    const cold = await endpoint();
    cold.receiver.fallback = 'hang';
    const ids = await events(2 * PER_ENDPOINT, 'u_cold');
    const a = node();
    expect(await a.round()).toBe(PER_ENDPOINT);
    await until(() => cold.receiver.hanging === PER_ENDPOINT, 'the first calls to be held open');
    expect(await leased(ids)).toBe(PER_ENDPOINT);
  });

  it('holds perEndpoint more for an endpoint that answered quickly, gives none of them to another node, and gives them back on stop', async () => {
    const quick = await endpoint();
    const a = node();
    await answeredQuickly(a, quick);
    const ids = await events(3 * PER_ENDPOINT, 'u_ahead');
    expect(await a.round()).toBe(PER_ENDPOINT);
    await until(() => quick.receiver.hanging === PER_ENDPOINT, "the first node's calls to be held open");
    expect(await leased(ids)).toBe(2 * PER_ENDPOINT);

    // Another node with room for all of them gets only what the first neither sends nor holds.
    const b = node(3 * PER_ENDPOINT);
    expect(await b.round()).toBe(PER_ENDPOINT);
    await until(() => quick.receiver.hanging === 2 * PER_ENDPOINT, "the second node's calls to be held open");
    expect(await b.round()).toBe(0);
    expect(await leased(ids)).toBe(3 * PER_ENDPOINT);

    // Stopping gives back what a node sends and what it holds: nothing waits for a lease to run out.
    await a.stop();
    await b.stop();
    expect(await leased(ids)).toBe(0);
    expect(await attemptsOn(quick)).toBe(1);
    expect(quick.receiver.received).toHaveLength(1 + 2 * PER_ENDPOINT);
  });

  it('sends what it holds as its slots free, each message once', async () => {
    const quick = await endpoint();
    const a = node();
    await answeredQuickly(a, quick);
    quick.receiver.fallback = { status: 204 };
    const ids = await events(10 * PER_ENDPOINT, 'u_held_sent');
    expect(await a.drain()).toBe(10 * PER_ENDPOINT);
    const sent = sentAfterFirst(quick);
    expect(sent).toHaveLength(ids.length);
    expect(new Set(sent)).toEqual(new Set(ids));
    expect(await attemptsOn(quick)).toBe(1 + ids.length);
    expect(await leased(ids)).toBe(0);
  });

  it('gives back what it held too long, unsent, for any node', async () => {
    const quick = await endpoint();
    const a = node();
    await answeredQuickly(a, quick);
    const ids = await events(2 * PER_ENDPOINT, 'u_too_long');
    expect(await a.round()).toBe(PER_ENDPOINT);
    await until(() => quick.receiver.hanging === PER_ENDPOINT, 'the calls to be held open');
    expect(await leased(ids)).toBe(2 * PER_ENDPOINT);

    t.clock.advance(HELD_MAX_MS / 1000 + 1);
    expect(await a.round()).toBe(0);
    await until(async () => (await leased(ids)) === PER_ENDPOINT, 'the held messages to be given back');
    const b = node();
    expect(await b.round()).toBe(PER_ENDPOINT);
    await until(() => quick.receiver.hanging === 2 * PER_ENDPOINT, "the other node's calls to be held open");
    // Each message was sent once, the held ones by the other node only, and none has an attempt yet.
    const sent = sentAfterFirst(quick);
    expect(sent).toHaveLength(ids.length);
    expect(new Set(sent)).toEqual(new Set(ids));
    expect(await attemptsOn(quick)).toBe(1);
  });

  it('gives back what it holds once a call to the endpoint fails, for any node', async () => {
    const quick = await endpoint();
    const timeoutMs = 1500;
    const calls = createOutbound({ allowPrivateUrls: true, timeoutMs });
    try {
      const a = node(PER_ENDPOINT, calls);
      await answeredQuickly(a, quick);
      const ids = await events(2 * PER_ENDPOINT, 'u_failing');
      expect(await a.round()).toBe(PER_ENDPOINT);
      await until(() => quick.receiver.hanging === PER_ENDPOINT, "the first node's calls to be held open");
      expect(await leased(ids)).toBe(2 * PER_ENDPOINT);

      // Both calls time out: what was held is given back. The endpoint, now unresponsive, gets one call
      // at a time from the first node, and the other message is left for any node.
      await until(() => quick.receiver.received.length === 2 + PER_ENDPOINT, "the first node's next call", 5 * timeoutMs);
      const b = node();
      await until(async () => (await b.round()) === 1, 'the other node to get a message the first gave back', 5 * timeoutMs);
      await until(() => quick.receiver.received.length === 1 + 2 * PER_ENDPOINT, "the other node's call");
      const sent = sentAfterFirst(quick);
      expect(new Set(sent)).toEqual(new Set(ids));
      // The calls that timed out have their attempt; what was given back was given back without one.
      const { deliveries } = await listDeliveries(t.ctx, { webhookId: quick.webhookId });
      const attempts = (id: string) => deliveries.find((d) => d.messageId === id)!.attempts.length;
      expect(sent.slice(0, PER_ENDPOINT).map(attempts)).toEqual([1, 1]);
      expect(attempts(sent.at(-1)!)).toBe(0);
    } finally {
      for (const n of nodes.splice(0)) await n.stop();
      await calls.close();
    }
  });
});
