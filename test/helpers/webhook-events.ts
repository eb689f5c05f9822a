/**
 * For the event suites: a real receiver subscribed to a server's events through the service, and the
 * events it got, each verified by the standardwebhooks package (not our code) before a test reads it.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../src/services/context.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import type { TestApp } from './test-app.js';
import { type ReceivedWebhook, startWebhookReceiver, verifiedEvent, type WebhookReceiver } from './webhook-receiver.js';

export interface DeliveredEvent {
  /** The webhook-id header: the outbox message's id. */
  messageId: string;
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

export interface Subscriber {
  webhookId: string;
  secret: string;
  receiver: WebhookReceiver;
  /**
   * Delivers everything due (the test node's dispatcher, drained), then every event received so far,
   * verified with the endpoint's secret as of the test clock; only `externalUserId`'s where given.
   */
  events(externalUserId?: string): Promise<DeliveredEvent[]>;
  close(): Promise<void>;
}

/** The body as standardwebhooks verifies it with `secret` at the test clock's time, with its webhook-id. */
export function delivered(t: Pick<TestApp, 'clock'>, secret: string, webhook: ReceivedWebhook): DeliveredEvent {
  const event = verifiedEvent(secret, webhook, t.clock.now().getTime());
  return { messageId: String(webhook.headers['webhook-id']), ...event } as DeliveredEvent;
}

/** A new receiver, added as an endpoint of the server (every event type unless `events` names some). */
export async function subscribe(t: TestApp, serverId: string, events?: string[]): Promise<Subscriber> {
  const receiver = await startWebhookReceiver();
  const { webhookId, secret } = await addWebhookEndpoint(t.ctx, { serverId, url: receiver.url, events, actor: CLI_ACTOR });
  // Each webhook verified once, just after the drain that delivered it: the library checks its
  // timestamp against the (test) clock, which later tests move on.
  const verified: DeliveredEvent[] = [];
  return {
    webhookId,
    secret,
    receiver,
    async events(externalUserId) {
      await t.webhooks.drain();
      verified.push(...receiver.received.slice(verified.length).map((webhook) => delivered(t, secret, webhook)));
      return externalUserId === undefined ? [...verified] : verified.filter((e) => e.data.externalUserId === externalUserId);
    },
    close: () => receiver.close(),
  };
}

/** A time as an event's `timestamp` carries it: ISO 8601 to the second. */
export function eventTimestamp(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The outbox rows, oldest first; only those whose event is about `externalUserId` where given. */
export async function outboxRows(ctx: Pick<ServiceContext, 'store'>, externalUserId?: string) {
  const rows = await ctx.store.db.selectFrom('webhook_messages').selectAll().orderBy('created_at').orderBy('id').execute();
  return externalUserId === undefined ? rows : rows.filter((row) => JSON.parse(row.payload).data.externalUserId === externalUserId);
}

/**
 * A member's credential of `provider` as GET /v1/end-users lists it (no secret): what an event
 * describes. Read from the list, which records no use: a read with secrets would move lastUsedAt on.
 */
export async function listedCredential(app: FastifyInstance, headers: Record<string, string>, externalUserId: string, provider: string) {
  const response = await app.inject({ method: 'GET', url: '/v1/end-users', query: { prefix: externalUserId, limit: '100' }, headers });
  if (response.statusCode !== 200) throw new Error(`the list answered ${response.statusCode}: ${response.body}`);
  const member = response.json().data.find((m: { externalUserId: string }) => m.externalUserId === externalUserId);
  const found = member?.credentials.find((c: { provider: string }) => c.provider === provider);
  if (!found) throw new Error(`${externalUserId} has no ${provider} credential`);
  return found as {
    id: string;
    provider: string;
    type: string;
    status: string;
    connectedAt: string;
    updatedAt: string;
    lastUsedAt: string | null;
    lastCheck: { at: string; outcome: string } | null;
  };
}
