/**
 * Lifecycle events (CONTRACT 7), written to the outbox in the transaction of the change they report:
 * one message per endpoint of the server that subscribes to the event's type. A change rolled back
 * takes its messages with it; a change committed has them stored before anyone is told it happened.
 *
 * Bodies carry ids, slugs, statuses and times, never a secret, a token or a typed value.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import type { CheckOutcome, CredentialRow } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';

export const WEBHOOK_EVENT_TYPES = [
  'credential.connected',
  'credential.revoked',
  'credential.needs_reauth',
  'credential.refresh_failed',
  'credential.recovered',
  'connect.failed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * What came of asking the provider to forget a revoked credential's tokens (oauth/provider-revocation.ts),
 * as credential.revoked tells it. It is declared here, with the event, so the webhooks depend on no
 * other domain's services.
 */
export type ProviderRevocation = 'succeeded' | 'failed' | 'not_supported';

/** A credential as an event describes it: the list's summary, with `revoked` once it is gone. */
export interface EventCredential {
  id: string;
  provider: string;
  type: 'oauth2' | 'static';
  status: 'active' | 'needs_reauth' | 'revoked';
  connectedAt: string;
  updatedAt: string;
  lastUsedAt: string | null;
  lastCheck: { at: string; outcome: CheckOutcome } | null;
}

export interface WebhookEvent {
  type: WebhookEventType;
  serverId: string;
  /** When the change happened (ISO). */
  at: string;
  /** The rest of `data`, after serverId. */
  data: Record<string, unknown>;
}

export function eventCredential(
  row: Pick<CredentialRow, 'id' | 'provider' | 'type' | 'status' | 'connected_at' | 'updated_at' | 'last_used_at' | 'last_check_at' | 'last_check_outcome'>,
  status: EventCredential['status'] = row.status,
): EventCredential {
  return {
    id: row.id,
    provider: row.provider,
    type: row.type,
    status,
    connectedAt: row.connected_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    lastCheck: lastCheckOf(row),
  };
}

/**
 * A credential's last check as the API, the dashboard and events show it (CONTRACT 8.3 and 8.4): null
 * where it was never checked, or only stamped by the background check with nothing to check with.
 * Declared here with the event, so the webhooks depend on no other domain's services.
 */
export function lastCheckOf(row: Pick<CredentialRow, 'last_check_at' | 'last_check_outcome'>): EventCredential['lastCheck'] {
  return row.last_check_at !== null && row.last_check_outcome !== null ? { at: row.last_check_at, outcome: row.last_check_outcome } : null;
}

/** The body sent, byte for byte: what the signature covers. */
function body(event: WebhookEvent): string {
  const timestamp = event.at.replace(/\.\d{3}Z$/, 'Z');
  return JSON.stringify({ type: event.type, timestamp, data: { serverId: event.serverId, ...event.data } });
}

function subscribes(events: string | null, type: WebhookEventType): boolean {
  return events === null || (JSON.parse(events) as string[]).includes(type);
}

/**
 * Writes the event for every endpoint of its server that subscribes to it, on the caller's
 * transaction; the ids of the messages written. `holdSeconds` keeps them from being sent for that
 * long, unless released before (see release): a node that dies before it knows the rest still has
 * them sent, as they were written.
 */
export async function recordEvent(ctx: ServiceContext, event: WebhookEvent, options: { holdSeconds?: number } = {}): Promise<string[]> {
  const endpoints = await ctx.store.webhooks.subscribersOf(event.serverId);
  const subscribed = endpoints.filter((endpoint) => subscribes(endpoint.events, event.type));
  if (subscribed.length === 0) return [];
  const payload = body(event);
  const now = ctx.clock.now();
  const due = iso(addSeconds(now, options.holdSeconds ?? 0));
  const messages = subscribed.map((endpoint) => ({
    id: newId('msg', now.getTime()),
    endpoint_id: endpoint.id,
    server_id: event.serverId,
    event_type: event.type,
    payload,
    status: 'pending' as const,
    created_at: iso(now),
    schedule_start: iso(now),
    failures: 0,
    next_attempt_at: due,
    lease_holder: null,
    lease_until: null,
    ended_at: null,
  }));
  await ctx.store.webhooks.addMessages(messages);
  return messages.map((m) => m.id);
}

/** Sends held messages now, with the event as it ends up (their first attempt has not been made). */
export async function releaseEvent(ctx: ServiceContext, messageIds: readonly string[], event: WebhookEvent): Promise<void> {
  await ctx.store.webhooks.release(messageIds, body(event), iso(ctx.clock.now()));
}

/**
 * How long a revocation's event waits for the provider's answer before it is sent without it: both
 * tokens' calls, and a margin. Sent then, it says `failed`: nobody saw the provider agree.
 */
export function revocationHoldSeconds(ctx: ServiceContext): number {
  return Math.ceil((2 * ctx.providerTimeoutMs) / 1000) + 5;
}

/**
 * `credential.revoked` for credentials just erased (on the caller's transaction). An OAuth
 * credential's event is held until `answered` gives the provider's answer (see releaseEvent).
 */
export async function recordRevocations(
  ctx: ServiceContext,
  input: { serverId: string; externalUserId: string; rows: CredentialRow[]; at: string; reason: 'revoked' | 'replaced'; replacedBy?: string },
): Promise<RevocationEvents> {
  const held: HeldRevocation[] = [];
  for (const row of input.rows) {
    const event = (providerRevocation: ProviderRevocation): WebhookEvent => ({
      type: 'credential.revoked',
      serverId: input.serverId,
      at: input.at,
      data: {
        externalUserId: input.externalUserId,
        credential: { ...eventCredential(row, 'revoked'), revokedAt: input.at },
        reason: input.reason,
        ...(input.replacedBy ? { replacedBy: input.replacedBy } : {}),
        providerRevocation,
      },
    });
    if (row.type === 'static') {
      await recordEvent(ctx, event('not_supported'));
      continue;
    }
    const messageIds = await recordEvent(ctx, event('failed'), { holdSeconds: revocationHoldSeconds(ctx) });
    held.push({ credentialId: row.id, messageIds, event });
  }
  return {
    answered: async (credentialId, providerRevocation) => {
      const found = held.find((h) => h.credentialId === credentialId);
      if (found) await releaseEvent(ctx, found.messageIds, found.event(providerRevocation));
    },
  };
}

interface HeldRevocation {
  credentialId: string;
  messageIds: string[];
  event: (providerRevocation: ProviderRevocation) => WebhookEvent;
}

export interface RevocationEvents {
  /** Releases a credential's held event with the provider's answer (after the transaction committed). */
  answered(credentialId: string, providerRevocation: ProviderRevocation): Promise<void>;
}
