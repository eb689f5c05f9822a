/**
 * A server's webhook endpoints (CONTRACT 7): add (the signing secret returned once), list, remove,
 * rotate the secret with a grace period, and the deliveries with their attempts; a failed message
 * can be resent. The dashboard and the CLI call these; the audit trail records every change.
 *
 * `serverId` in an endpoint's or message's operation scopes it: the dashboard passes the server it
 * checked the account against, so another server's id answers as if it did not exist.
 */

import { describeRefusal, outboundUrlRefusal } from '../../outbound/address-policy.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import type { WebhookMessageStatus } from '../../store/schema.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { getServer, MAX_GRACE_SECONDS } from '../servers/servers.js';
import { requireWellFormed } from '../well-formed.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-events.js';
import { newWebhookSecret, webhookSecretAad } from './webhook-signing.js';

export const MAX_ENDPOINTS_PER_SERVER = 10;
const MAX_URL_LENGTH = 2048;
/** Deliveries listed at most, newest first. */
export const DELIVERIES_SHOWN = 100;
/**
 * The grace period "Rotate secret" offers first and the CLI takes without --grace-seconds: a day, as
 * Svix gives. Both secrets sign meanwhile, so receivers keep verifying while the new one is deployed;
 * a leaked secret is ended at once with 0.
 */
export const DEFAULT_SECRET_GRACE_SECONDS = 24 * 3600;
export const MESSAGE_STATUSES: readonly WebhookMessageStatus[] = ['pending', 'delivered', 'failed'];

export interface WebhookEndpointView {
  id: string;
  serverId: string;
  url: string;
  /** The event types it receives; every type where it subscribed to all. */
  events: WebhookEventType[];
  createdAt: string;
}

export interface DeliveryAttemptView {
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface DeliveryView {
  messageId: string;
  type: string;
  createdAt: string;
  status: WebhookMessageStatus;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  endedAt: string | null;
  attempts: DeliveryAttemptView[];
}

function checkEvents(events: readonly string[] | undefined): WebhookEventType[] | null {
  if (events === undefined || events.length === 0) return null;
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) {
    throw invalid('events', `unknown event type ${JSON.stringify(unknown[0])}: the types are ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(events)] as WebhookEventType[];
}

/** A URL Keyward will POST events to: the outbound policy of CONTRACT 3. */
function checkUrl(ctx: ServiceContext, url: string): string {
  requireWellFormed({ url: ['endpoint URL', url] });
  if (url.length > MAX_URL_LENGTH) throw invalid('url', `the endpoint URL must be at most ${MAX_URL_LENGTH} characters`);
  const refusal = outboundUrlRefusal(url, ctx.outbound.allowPrivateUrls);
  if (refusal) throw invalid('url', describeRefusal('endpoint URL', refusal));
  return url;
}

function view(row: { id: string; server_id: string; url: string; events: string | null; created_at: string }): WebhookEndpointView {
  return {
    id: row.id,
    serverId: row.server_id,
    url: row.url,
    events: row.events === null ? [...WEBHOOK_EVENT_TYPES] : (JSON.parse(row.events) as WebhookEventType[]),
    createdAt: row.created_at,
  };
}

async function addSecret(ctx: ServiceContext, endpointId: string, now: string): Promise<string> {
  const secret = newWebhookSecret();
  const id = newId('whs');
  await ctx.store.webhooks.addSecret({
    id,
    endpoint_id: endpointId,
    secret: ctx.vault.seal(secret, webhookSecretAad(id, endpointId)),
    created_at: now,
    expires_at: null,
  });
  return secret;
}

export async function addWebhookEndpoint(
  ctx: ServiceContext,
  input: { serverId: string; url: string; events?: readonly string[]; actor: Actor },
): Promise<{ webhookId: string; secret: string }> {
  const url = checkUrl(ctx, input.url.trim());
  const events = checkEvents(input.events);
  const now = iso(ctx.clock.now());
  const webhookId = newId('wh');
  const secret = await ctx.store.transaction(async () => {
    // Locks the server's row on PostgreSQL, so two adds at once cannot both pass the limit.
    const server = await ctx.store.servers.lockForUpdate(input.serverId);
    if (!server) throw new DomainError('server_not_found', { detail: `no server ${input.serverId}` });
    if ((await ctx.store.webhooks.endpointsOf(input.serverId)).length >= MAX_ENDPOINTS_PER_SERVER) {
      throw new DomainError('webhook_limit_reached', { detail: `a server has at most ${MAX_ENDPOINTS_PER_SERVER} webhook endpoints: remove one first` });
    }
    await ctx.store.webhooks.addEndpoint({ id: webhookId, server_id: input.serverId, url, events: events && JSON.stringify(events), created_at: now });
    const made = await addSecret(ctx, webhookId, now);
    await recordAudit(ctx, {
      accountId: server.account_id,
      serverId: input.serverId,
      actor: input.actor,
      action: 'webhook.added',
      targetId: webhookId,
      detail: { url, events: events ?? 'all' },
      at: now,
    });
    return made;
  });
  return { webhookId, secret };
}

export async function listWebhookEndpoints(ctx: ServiceContext, serverId: string): Promise<{ webhooks: WebhookEndpointView[] }> {
  await getServer(ctx, serverId);
  return { webhooks: (await ctx.store.webhooks.endpointsOf(serverId)).map(view) };
}

/** The endpoint, where it exists (on `serverId`, where given). */
async function findEndpoint(ctx: ServiceContext, webhookId: string, serverId?: string) {
  const endpoint = await ctx.store.webhooks.endpoint(webhookId);
  if (!endpoint || (serverId !== undefined && endpoint.server_id !== serverId))
    throw new DomainError('webhook_not_found', { detail: `no webhook endpoint ${webhookId}` });
  return endpoint;
}

export async function getWebhookEndpoint(ctx: ServiceContext, webhookId: string, serverId?: string): Promise<WebhookEndpointView> {
  return view(await findEndpoint(ctx, webhookId, serverId));
}

/** Removes the endpoint with its secrets and its messages: nothing more is sent to it. */
export async function removeWebhookEndpoint(
  ctx: ServiceContext,
  input: { webhookId: string; serverId?: string; actor: Actor },
): Promise<{ webhookId: string; removedAt: string }> {
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    const endpoint = await findEndpoint(ctx, input.webhookId, input.serverId);
    await ctx.store.webhooks.removeEndpoint(endpoint.id);
    await recordAudit(ctx, {
      accountId: endpoint.account_id,
      serverId: endpoint.server_id,
      actor: input.actor,
      action: 'webhook.removed',
      targetId: endpoint.id,
      detail: { url: endpoint.url },
      at: now,
    });
  });
  return { webhookId: input.webhookId, removedAt: now };
}

/**
 * A new signing secret. The current one keeps signing for `graceSeconds` (0 ends it now), so that a
 * receiver can take the new one in before the old one stops: meanwhile every message carries both
 * signatures. Secrets already in a grace period keep their earlier end.
 */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  input: { webhookId: string; serverId?: string; graceSeconds: number; actor: Actor },
): Promise<{ webhookId: string; secret: string }> {
  if (!Number.isInteger(input.graceSeconds) || input.graceSeconds < 0 || input.graceSeconds > MAX_GRACE_SECONDS) {
    throw invalid('graceSeconds', `the grace period must be 0 to ${MAX_GRACE_SECONDS} seconds`);
  }
  const nowDate = ctx.clock.now();
  const now = iso(nowDate);
  const secret = await ctx.store.transaction(async () => {
    const endpoint = await findEndpoint(ctx, input.webhookId, input.serverId);
    await ctx.store.webhooks.endCurrentSecrets(endpoint.id, iso(addSeconds(nowDate, input.graceSeconds)));
    const made = await addSecret(ctx, endpoint.id, now);
    await recordAudit(ctx, {
      accountId: endpoint.account_id,
      serverId: endpoint.server_id,
      actor: input.actor,
      action: 'webhook.secret_rotated',
      targetId: endpoint.id,
      detail: { url: endpoint.url, graceSeconds: input.graceSeconds },
      at: now,
    });
    return made;
  });
  return { webhookId: input.webhookId, secret };
}

/** The endpoint's deliveries, newest first (DELIVERIES_SHOWN at most), each with its attempts. */
export async function listDeliveries(
  ctx: ServiceContext,
  input: { webhookId: string; serverId?: string; status?: string },
): Promise<{ deliveries: DeliveryView[] }> {
  if (input.status !== undefined && !MESSAGE_STATUSES.includes(input.status as WebhookMessageStatus)) {
    throw invalid('status', `the status must be one of ${MESSAGE_STATUSES.join(', ')}`);
  }
  const endpoint = await findEndpoint(ctx, input.webhookId, input.serverId);
  const messages = await ctx.store.webhooks.messagesOf(endpoint.id, input.status as WebhookMessageStatus | undefined, DELIVERIES_SHOWN);
  const attempts = await ctx.store.webhooks.attemptsOf(messages.map((m) => m.id));
  const byMessage = new Map<string, DeliveryAttemptView[]>();
  for (const a of attempts) {
    const list = byMessage.get(a.message_id) ?? [];
    list.push({ attemptedAt: a.attempted_at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms });
    byMessage.set(a.message_id, list);
  }
  return {
    deliveries: messages.map((m) => ({
      messageId: m.id,
      type: m.event_type,
      createdAt: m.created_at,
      status: m.status,
      nextAttemptAt: m.status === 'pending' ? m.next_attempt_at : null,
      endedAt: m.ended_at,
      attempts: byMessage.get(m.id) ?? [],
    })),
  };
}

/** Sends a failed message again, with the same webhook-id and a new 24 hours of retries. */
export async function resendMessage(
  ctx: ServiceContext,
  input: { messageId: string; serverId?: string; actor: Actor },
): Promise<{ messageId: string; status: 'pending' }> {
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    const message = await ctx.store.webhooks.message(input.messageId);
    if (!message || (input.serverId !== undefined && message.server_id !== input.serverId)) {
      throw new DomainError('webhook_message_not_found', { detail: `no webhook message ${input.messageId}` });
    }
    if (!(await ctx.store.webhooks.resend(message.id, now))) {
      throw new DomainError('webhook_message_not_failed', { detail: `message ${message.id} is ${message.status}: only a failed message can be resent` });
    }
    await recordAudit(ctx, {
      accountId: message.account_id,
      serverId: message.server_id,
      actor: input.actor,
      action: 'webhook.message_resent',
      targetId: message.id,
      detail: { webhookId: message.endpoint_id },
      at: now,
    });
  });
  return { messageId: input.messageId, status: 'pending' };
}
