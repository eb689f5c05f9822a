/**
 * Lifecycle events (CONTRACT 7), written to the outbox in the transaction of the change they report:
 * one message per endpoint of the server that subscribes to the event's type. A change rolled back
 * takes its messages with it; a change committed has them stored before anyone is told it happened.
 *
 * Bodies carry ids, slugs, statuses and times, never a secret, a token or a typed value. An event
 * about a member also carries its profile, `data.endUser` (CONTRACT 10): its display name, email and
 * tags, as the member has them when the event is written.
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

/** A member's profile as events, the list and the read show it (CONTRACT 10): null and {} where unset. */
export interface EventEndUser {
  displayName: string | null;
  email: string | null;
  tags: Record<string, string>;
}

/**
 * The profile of a member's row (audience_members: display_name, email, and tags as a JSON object),
 * or of no row at all (a flow that failed before its member was made): every field unset. Declared
 * here with the event, so the webhooks depend on no other domain's services.
 */
export function endUserOf(row: { display_name: string | null; email: string | null; tags: string | null } | undefined): EventEndUser {
  return { displayName: row?.display_name ?? null, email: row?.email ?? null, tags: row?.tags ? (JSON.parse(row.tags) as Record<string, string>) : {} };
}

/** The member's profile for an event's `data.endUser`, read on the caller's transaction. */
export async function eventEndUser(ctx: ServiceContext, serverId: string, externalUserId: string): Promise<EventEndUser> {
  return endUserOf(await ctx.store.audience.profileOf(serverId, externalUserId));
}

/**
 * The event's data with the member's profile: an event about a member (one whose data names an
 * externalUserId) that does not carry `endUser` yet gets it from the member's row.
 */
async function withEndUser(ctx: ServiceContext, event: WebhookEvent): Promise<WebhookEvent> {
  const { externalUserId } = event.data;
  if (typeof externalUserId !== 'string' || 'endUser' in event.data) return event;
  return { ...event, data: { ...event.data, endUser: await eventEndUser(ctx, event.serverId, externalUserId) } };
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
  const payload = body(await withEndUser(ctx, event));
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
  await ctx.store.webhooks.release(messageIds, body(await withEndUser(ctx, event)), iso(ctx.clock.now()));
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
  input: {
    serverId: string;
    externalUserId: string;
    rows: CredentialRow[];
    at: string;
    reason: 'revoked' | 'replaced';
    replacedBy?: string;
    /** The member's profile where its row is gone already (a member removed with its credentials); else read from the row. */
    endUser?: EventEndUser;
  },
): Promise<RevocationEvents> {
  const held: HeldRevocation[] = [];
  // Read now, on the change's transaction: a held event is released later, when the member may be gone.
  const endUser = input.rows.length === 0 ? undefined : (input.endUser ?? (await eventEndUser(ctx, input.serverId, input.externalUserId)));
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
        endUser,
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
